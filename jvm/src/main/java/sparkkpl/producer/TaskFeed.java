package sparkkpl.producer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One task's records on their way into the shared producer. The task's thread reserves room under
 * the queue limit for each record; the records are added to the KPL in batches on a thread Spark
 * never interrupts ({@link SharedProducer#callKpl}), one hand-off per batch rather than per record.
 * Not thread-safe: one task, one thread.
 */
public final class TaskFeed {
    /** Records per hand-off: enough that the hand-off costs little per record. */
    static final int BATCH_RECORDS = 256;

    /** What the task does with a record the KPL refused; it may fail the task by throwing. */
    public interface RefusalHandler {
        void refused(KinesisRecord record, long rowNumber, IllegalArgumentException error) throws IOException;
    }

    private record Pending(KinesisRecord record, long rowNumber, long size) {}

    private final SharedProducer producer;
    private final TaskAcks acks;
    private final TaskQueueStats stats;
    private final long timeoutNanos;
    private final RefusalHandler onRefused;
    private final List<Pending> pending = new ArrayList<>(BATCH_RECORDS);
    /** How many pending records have been handed to the KPL (added, or refused and given back). */
    private int sent;
    /** The KPL's reason for the record {@link #addFrom} stopped at. */
    private IllegalArgumentException refusal;

    public TaskFeed(SharedProducer producer, TaskAcks acks, TaskQueueStats stats, long timeoutMs,
                    RefusalHandler onRefused) {
        this.producer = producer;
        this.acks = acks;
        this.stats = stats;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.onRefused = onRefused;
    }

    /**
     * Takes one record (row {@code rowNumber} of the task), first waiting for room under the queue
     * limit. Before waiting it sends its own pending records, whose acknowledgements make room.
     *
     * @throws TimeoutException when the queue stayed full for the task's timeout
     * @throws IOException when a record the KPL refused fails the task
     */
    public void add(KinesisRecord record, long rowNumber) throws IOException, InterruptedException, TimeoutException {
        long size = SharedProducer.recordBytes(record);
        if (!producer.tryReserve(size, stats)) {
            send();
            producer.reserve(size, timeoutNanos, stats);
        }
        pending.add(new Pending(record, rowNumber, size));
        if (pending.size() >= BATCH_RECORDS) {
            send();
        }
    }

    /**
     * Adds every pending record to the KPL, in order. A record the KPL refuses goes to the refusal
     * handler; if that fails the task, the records after it are not sent.
     */
    public void send() throws IOException {
        sent = 0;
        try {
            while (sent < pending.size()) {
                int from = sent;
                int refused = SharedProducer.callKpl(() -> addFrom(from));
                if (refused >= 0) {
                    Pending record = pending.get(refused);
                    onRefused.refused(record.record(), record.rowNumber(), refusal);
                }
            }
        } finally {
            unreserveFrom(sent);
            pending.clear();
        }
    }

    /** Sends what is pending, then waits until Kinesis has acknowledged or finally failed every record of the task. */
    public void finish(long timeoutMs) throws IOException, InterruptedException, TimeoutException {
        send();
        acks.awaitAll(producer::flush, timeoutMs);
    }

    /** Gives back the room of records never sent (the task failed or was killed first). */
    public void discard() {
        unreserveFrom(0);
        pending.clear();
    }

    /**
     * On a KPL-call thread: adds the pending records from index {@code from}; returns the index of
     * one the KPL refused (the reason in {@link #refusal}), or -1 when all were added.
     */
    private int addFrom(int from) {
        for (int i = from; i < pending.size(); i++) {
            Pending record = pending.get(i);
            sent = i + 1; // from here on its room is the KPL's to give back, whatever add does
            try {
                producer.add(record.record(), record.rowNumber(), record.size(), acks);
            } catch (IllegalArgumentException e) {
                refusal = e;
                return i;
            }
        }
        return -1;
    }

    private void unreserveFrom(int index) {
        for (int i = index; i < pending.size(); i++) {
            producer.unreserve(pending.get(i).size());
        }
    }
}
