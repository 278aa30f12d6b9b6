package sparkkpl.producer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.WriteConfig;
import sparkkpl.kinesis.KinesisRecord;

/**
 * Two holders of one shared producer add records continuously; its daemon is killed with SIGKILL
 * and a third holder acquires while the KPL restarts it. The holders carry on, each with a new
 * task's acknowledgements from the third acquire on: those records must all succeed (the producer
 * was not closed under its holders), and one daemon must be left. Driven by
 * tests/sink/daemon/test_producer_lifecycle.py.
 *
 * <p>Arguments: stream, then options as name=value.
 */
public final class DaemonKillMain {
    private static final long SETTLE_MS = 5_000;

    private DaemonKillMain() {}

    /** One holder's records, before and after the third acquire, each phase as a task of its own. */
    private static final class Holder implements Runnable {
        final String name;
        final String stream;
        final SharedProducer producer;
        final AtomicBoolean afterThirdAcquire;
        final AtomicBoolean running = new AtomicBoolean(true);
        final TaskAcks later = new TaskAcks();
        long addedLater;
        final List<String> errors = new ArrayList<>();

        Holder(String name, String stream, SharedProducer producer, AtomicBoolean afterThirdAcquire) {
            this.name = name;
            this.stream = stream;
            this.producer = producer;
            this.afterThirdAcquire = afterThirdAcquire;
        }

        @Override
        public void run() {
            TaskFeed earlier = feed(new TaskAcks());
            TaskFeed feed = earlier;
            for (long row = 1; running.get(); row++) {
                if (feed == earlier && afterThirdAcquire.get()) {
                    send(earlier);
                    feed = feed(later);
                }
                try {
                    feed.add(new KinesisRecord(stream, name + "-" + row, null,
                        (name + "-" + row).getBytes(StandardCharsets.UTF_8)), row);
                    if (feed != earlier) {
                        addedLater++;
                    }
                    Thread.sleep(1);
                } catch (Exception e) {
                    errors.add(String.valueOf(e));
                }
            }
            send(feed);
        }

        private void send(TaskFeed feed) {
            try {
                feed.send();
            } catch (Exception e) {
                errors.add(String.valueOf(e));
            }
        }

        private TaskFeed feed(TaskAcks acks) {
            return new TaskFeed(producer, acks, new TaskQueueStats(), 60_000, (record, row, error) -> {
                throw error;
            }, RecordGrouping.ONE_BY_ONE, 100);
        }
    }

    public static void main(String[] args) throws Exception {
        String stream = args[0];
        Map<String, String> options = MainOptions.from(args, 1);
        ProducerSpec config = WriteConfig.read(Map.of(), options).options().producer();
        AtomicBoolean afterThirdAcquire = new AtomicBoolean();
        List<Holder> holders = List.of(
            new Holder("a", stream, ProducerRegistry.acquire(config), afterThirdAcquire),
            new Holder("b", stream, ProducerRegistry.acquire(config), afterThirdAcquire));
        List<Thread> threads = new ArrayList<>();
        holders.forEach(holder -> threads.add(new Thread(holder, "holder-" + holder.name)));
        threads.forEach(Thread::start);
        Thread.sleep(2_000);

        List<ProcessHandle> killed = QuickCloseMain.daemonProcesses();
        killed.forEach(ProcessHandle::destroyForcibly);
        long killedAt = System.nanoTime();
        SharedProducer third = ProducerRegistry.acquire(config);
        afterThirdAcquire.set(true);
        System.out.println("killed " + killed.size() + " daemon(s); third acquire got the holders' producer: "
            + (third == holders.get(0).producer));

        Thread.sleep(3_000);
        holders.forEach(holder -> holder.running.set(false));
        for (Thread thread : threads) {
            thread.join();
        }
        for (Holder holder : holders) {
            String outcome;
            try {
                holder.later.awaitAll(holder.producer::flushForCommits, () -> { }, 60_000);
                holder.later.throwIfProducerFailed();
                outcome = "ok";
            } catch (Exception e) {
                outcome = String.valueOf(e);
            }
            System.out.println("holder " + holder.name + " after the third acquire: added " + holder.addedLater
                + ", succeeded " + holder.later.succeeded() + ", " + outcome + "; errors " + holder.errors.size()
                + (holder.errors.isEmpty() ? "" : " e.g. " + holder.errors.get(0)));
        }
        long waitMs = SETTLE_MS - (System.nanoTime() - killedAt) / 1_000_000;
        Thread.sleep(Math.max(0, waitMs));
        System.out.println("daemons alive 5 s after the kill: " + QuickCloseMain.daemonProcesses().size());
        holders.forEach(holder -> ProducerRegistry.release(holder.producer));
        ProducerRegistry.release(third);
    }
}
