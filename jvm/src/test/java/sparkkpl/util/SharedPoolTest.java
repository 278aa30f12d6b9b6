package sparkkpl.util;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.After;
import org.junit.Test;

/** Sharing, reference counts and idle close of the shared pool (as the producers use it), on a clock the test moves. */
public class SharedPoolTest {
    private static final long IDLE_MS = 1_000;

    private static final class FakeProducer implements SharedPool.Pooled {
        boolean broken;
        int closes;
        boolean failsToClose;
        /** What awaitReady throws, if anything: its daemon could not be placed again. */
        RuntimeException notReady;

        @Override
        public boolean isBroken() {
            return broken;
        }

        @Override
        public void awaitReady() {
            if (notReady != null) {
                throw notReady;
            }
        }

        @Override
        public long idleTimeoutMs() {
            return IDLE_MS;
        }

        @Override
        public void close() {
            closes++;
            if (failsToClose) {
                throw new IllegalStateException("the daemon would not stop");
            }
        }
    }

    /** Runs scheduled tasks when the test moves the clock past their time. */
    private static final class ManualTime implements SharedPool.Scheduler {
        long nanos = 42;
        private final List<Long> dueNanos = new ArrayList<>();
        private final List<Runnable> tasks = new ArrayList<>();

        @Override
        public void schedule(Runnable task, long delayMs) {
            dueNanos.add(nanos + TimeUnit.MILLISECONDS.toNanos(delayMs));
            tasks.add(task);
        }

        /** Runs what is due, and what that schedules for now (the closes an idle sweep hands on). */
        void advanceMs(long ms) {
            nanos += TimeUnit.MILLISECONDS.toNanos(ms);
            for (List<Runnable> due = takeDue(); !due.isEmpty(); due = takeDue()) {
                due.forEach(Runnable::run);
            }
        }

        private List<Runnable> takeDue() {
            List<Runnable> due = new ArrayList<>();
            for (int i = tasks.size() - 1; i >= 0; i--) {
                if (dueNanos.get(i) <= nanos) {
                    dueNanos.remove(i);
                    due.add(0, tasks.remove(i));
                }
            }
            return due;
        }
    }

    private final ManualTime time = new ManualTime();
    private final SharedPool<String, FakeProducer> pool = new SharedPool<>(() -> time.nanos, time);
    private final List<FakeProducer> created = new ArrayList<>();
    private final ExecutorService tasks = Executors.newCachedThreadPool();

    @After
    public void stopTasks() {
        tasks.shutdownNow();
    }

    /** A creation that waits for the test, as placing and starting a daemon waits for the disk and AWS. */
    private static final class BlockedCreation implements Supplier<FakeProducer> {
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch finish = new CountDownLatch(1);
        final AtomicInteger calls = new AtomicInteger();
        /** What the creation throws once finished, if anything. */
        volatile RuntimeException failure;
        volatile FakeProducer made;

        @Override
        public FakeProducer get() {
            calls.incrementAndGet();
            started.countDown();
            try {
                finish.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            if (failure != null) {
                throw failure;
            }
            made = new FakeProducer();
            return made;
        }
    }

    /** Starts acquiring {@code key} by {@code creation} on a task thread, once it is under way. */
    private Future<FakeProducer> acquiringWhileBlocked(String key, BlockedCreation creation) throws InterruptedException {
        Future<FakeProducer> acquiring = tasks.submit(() -> pool.acquire(key, creation));
        assertTrue(creation.started.await(10, TimeUnit.SECONDS));
        return acquiring;
    }

    /** A close that waits (a daemon flushing its last records for seconds) must not hold up closing another. */
    @Test
    public void aSlowCloseDoesNotHoldUpClosingAnother() throws Exception {
        SharedPool<String, SlowlyClosed> idlePool = SharedPool.closedWhenIdle();
        SlowlyClosed slow = idlePool.acquire("slow", () -> new SlowlyClosed(true));
        SlowlyClosed quick = idlePool.acquire("quick", () -> new SlowlyClosed(false));
        try {
            idlePool.release(slow);
            assertTrue("the slow one is closing", slow.closing.await(10, TimeUnit.SECONDS));
            idlePool.release(quick);
            assertTrue("the other closes meanwhile", quick.closed.await(5, TimeUnit.SECONDS));
        } finally {
            slow.finish.countDown();
        }
    }

    /** Closed at once when idle; a slow one waits in its close until the test lets it finish. */
    private static final class SlowlyClosed implements SharedPool.Pooled {
        final CountDownLatch closing = new CountDownLatch(1);
        final CountDownLatch finish = new CountDownLatch(1);
        final CountDownLatch closed = new CountDownLatch(1);
        private final boolean slow;

        SlowlyClosed(boolean slow) {
            this.slow = slow;
        }

        @Override
        public boolean isBroken() {
            return false;
        }

        @Override
        public void awaitReady() {
        }

        @Override
        public long idleTimeoutMs() {
            return 0;
        }

        @Override
        public void close() {
            closing.countDown();
            try {
                if (slow) {
                    finish.await(30, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closed.countDown();
        }
    }

    private FakeProducer acquire(String key) {
        return pool.acquire(key, () -> {
            FakeProducer producer = new FakeProducer();
            created.add(producer);
            return producer;
        });
    }

    @Test
    public void usersOfOneKeyShareOneProducerAndOtherKeysGetTheirOwn() {
        FakeProducer first = acquire("a");

        assertSame(first, acquire("a"));
        assertNotSame(first, acquire("b"));
        assertEquals(2, created.size());
        assertEquals(2, pool.open());
    }

    @Test
    public void aProducerClosesOnlyOnceItsLastHolderHasReleasedItForTheIdleTimeout() {
        FakeProducer producer = acquire("a");
        acquire("a");
        pool.release(producer);
        time.advanceMs(IDLE_MS);
        assertEquals("still held", 0, producer.closes);

        pool.release(producer);
        time.advanceMs(IDLE_MS - 1);
        assertEquals(0, producer.closes);
        time.advanceMs(1);

        assertEquals(1, producer.closes);
        assertEquals(0, pool.open());
        assertNotSame("the next user gets a new one", producer, acquire("a"));
    }

    @Test
    public void aProducerTakenAgainBeforeItsTimeoutStaysOpen() {
        FakeProducer producer = acquire("a");
        pool.release(producer);
        time.advanceMs(IDLE_MS / 2);
        assertSame(producer, acquire("a"));

        time.advanceMs(IDLE_MS);
        assertEquals(0, producer.closes);

        pool.release(producer);
        time.advanceMs(IDLE_MS);
        assertEquals(1, producer.closes);
    }

    @Test
    public void theIdleTimeCountsFromTheLastRelease() {
        FakeProducer producer = acquire("a");
        pool.release(producer);
        time.advanceMs(600);
        pool.release(acquire("a"));

        time.advanceMs(400);
        assertEquals("idle for 400 ms only", 0, producer.closes);
        time.advanceMs(600);
        assertEquals(1, producer.closes);
    }

    @Test
    public void aBrokenProducerIsReplacedButClosedOnlyWhenItsLastHolderReleasesIt() {
        FakeProducer broken = acquire("a");
        broken.broken = true;

        FakeProducer replacement = acquire("a");

        assertNotSame(broken, replacement);
        assertEquals(List.of(replacement), pool.current());
        assertEquals(2, pool.open());
        time.advanceMs(0);
        assertEquals("its holder still has records in flight", 0, broken.closes);

        pool.release(broken);
        time.advanceMs(0);
        assertEquals(1, broken.closes);
        assertEquals(1, pool.open());
        assertEquals(0, replacement.closes);
    }

    @Test
    public void aBrokenProducerNobodyHoldsClosesAtOnce() {
        FakeProducer broken = acquire("a");
        pool.release(broken);
        broken.broken = true;

        acquire("a");
        time.advanceMs(0);

        assertEquals(1, broken.closes);
        time.advanceMs(IDLE_MS);
        assertEquals("closed once, not again when its idle time is up", 1, broken.closes);
    }

    @Test
    public void aProducerThatIsNotReadyIsReleasedSoItStillClosesWhenBrokenOrIdle() {
        FakeProducer producer = acquire("a");
        pool.release(producer);
        producer.notReady = new IllegalStateException("the daemon's folder is on a full disk");

        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> acquire("a"));

        assertSame(producer.notReady, thrown);
        time.advanceMs(IDLE_MS);
        assertEquals("the failed acquirer holds it no more", 1, producer.closes);
        assertEquals(0, pool.open());
    }

    @Test
    public void closeAllClosesEveryProducerHeldOrDetachedEvenWhenOneFails() {
        FakeProducer detached = acquire("a");
        detached.broken = true;
        detached.failsToClose = true;
        FakeProducer held = acquire("a");
        FakeProducer idle = acquire("b");
        pool.release(idle);

        pool.closeAll();

        assertEquals(1, detached.closes);
        assertEquals(1, held.closes);
        assertEquals(1, idle.closes);
        assertEquals(0, pool.open());
        assertFalse(pool.current().contains(held));
        assertTrue(pool.current().isEmpty());
    }

    @Test
    public void makingAProducerKeepsNoOtherKeysAcquireOrReleaseNorTheDriversFiguresWaiting() throws Exception {
        FakeProducer other = acquire("a");
        BlockedCreation creation = new BlockedCreation();
        Future<FakeProducer> making = acquiringWhileBlocked("b", creation);

        Future<Integer> othersMeanwhile = tasks.submit(() -> {
            pool.release(other);
            pool.release(acquire("a"));
            return pool.current().size() + pool.open();
        });

        assertEquals("the producer being made is not open yet", 2, (int) othersMeanwhile.get(10, TimeUnit.SECONDS));
        creation.finish.countDown();
        assertEquals(List.of(other, making.get(10, TimeUnit.SECONDS)), List.copyOf(pool.current()));
    }

    @Test
    public void tasksWantingAProducerBeingMadeShareItsCreationAndFailWithItAndTheNextTaskTriesAgain() throws Exception {
        BlockedCreation creation = new BlockedCreation();
        creation.failure = new IllegalStateException("the daemon's folder is on a full disk");
        Future<FakeProducer> first = acquiringWhileBlocked("a", creation);
        Future<FakeProducer> second = tasks.submit(() -> pool.acquire("a", creation));
        Thread.sleep(100); // the second task is waiting for the first one's creation, not creating

        creation.finish.countDown();

        for (Future<FakeProducer> task : List.of(first, second)) {
            ExecutionException failed = assertThrows(ExecutionException.class, () -> task.get(10, TimeUnit.SECONDS));
            assertSame(creation.failure, failed.getCause());
        }
        assertEquals(1, creation.calls.get());
        assertEquals(0, pool.open());
        assertSame(acquire("a"), created.get(0));
    }

    @Test
    public void aProducerMadeWhileThePoolClosesEverythingIsClosedAndItsTasksAreTold() throws Exception {
        BlockedCreation creation = new BlockedCreation();
        Future<FakeProducer> making = acquiringWhileBlocked("a", creation);

        tasks.submit(pool::closeAll).get(10, TimeUnit.SECONDS);
        creation.finish.countDown();

        ExecutionException failed = assertThrows(ExecutionException.class, () -> making.get(10, TimeUnit.SECONDS));
        assertTrue(failed.getCause().getMessage(), failed.getCause().getMessage().contains("exiting"));
        assertEquals(1, creation.made.closes);
        assertEquals(0, pool.open());
    }
}
