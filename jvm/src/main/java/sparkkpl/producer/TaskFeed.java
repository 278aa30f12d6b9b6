package sparkkpl.producer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One task's records on their way into the shared producer. The task's thread reserves room under
 * the queue limit for each record; its {@link RecordGrouping} turns records into the KPL's user
 * records (each alone, or aggregates), which are added to the KPL in batches on a thread Spark never
 * interrupts ({@link SharedProducer#callKpl}), one hand-off per batch rather than per record.
 * Not thread-safe: one task, one thread.
 */
public final class TaskFeed {
    /** Task records per hand-off: enough that the hand-off costs little per record. */
    static final int BATCH_RECORDS = 256;

    /** What the task does with a record the KPL refused; it may fail the task by throwing. */
    public interface RefusalHandler {
        void refused(KinesisRecord record, long rowNumber, IllegalArgumentException error) throws IOException;
    }

    private final SharedProducer producer;
    private final TaskAcks acks;
    private final TaskQueueStats stats;
    private final long timeoutNanos;
    private final RefusalHandler onRefused;
    private final RecordGrouping grouping;
    private final List<KplRecord> pending = new ArrayList<>();
    /** The task records the pending KPL records carry. */
    private int pendingCarried;
    /** How many pending KPL records have been handed to the KPL (added, or refused and given back). */
    private int sent;
    /** The KPL's reason for the record {@link #addFrom} stopped at. */
    private IllegalArgumentException refusal;

    public TaskFeed(SharedProducer producer, TaskAcks acks, TaskQueueStats stats, long timeoutMs,
                    RefusalHandler onRefused, RecordGrouping grouping) {
        this.producer = producer;
        this.acks = acks;
        this.stats = stats;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.onRefused = onRefused;
        this.grouping = grouping;
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
        TaskRecord taskRecord = new TaskRecord(record, rowNumber, size);
        try {
            grouping.add(taskRecord, this::ready);
        } catch (IOException | RuntimeException e) {
            producer.unreserve(size);
            throw e;
        }
        if (pendingCarried >= BATCH_RECORDS) {
            handOff();
        }
    }

    private void ready(KplRecord record) {
        pending.add(record);
        pendingCarried += record.carried().size();
    }

    /**
     * Adds every record the task holds to the KPL, in order, aggregates sealed however full they
     * are. Each task record inside a KPL record the KPL refuses goes to the refusal handler; if that
     * fails the task, the records after it are not sent.
     */
    public void send() throws IOException {
        grouping.sealAll(this::ready);
        handOff();
    }

    /**
     * Adds the complete KPL records to the KPL, in order, leaving open aggregates open: a full batch
     * goes on while the task adds rows, and must not cut the other shards' aggregates short.
     */
    private void handOff() throws IOException {
        sent = 0;
        try {
            while (sent < pending.size()) {
                int from = sent;
                int refused = SharedProducer.callKpl(() -> addFrom(from));
                if (refused >= 0) {
                    for (TaskRecord record : pending.get(refused).carried()) {
                        onRefused.refused(record.record(), record.rowNumber(), refusal);
                    }
                }
            }
        } finally {
            unreserveFrom(sent);
            pending.clear();
            pendingCarried = 0;
        }
    }

    /** Sends what is pending, then waits until Kinesis has acknowledged or finally failed every record of the task. */
    public void finish(long timeoutMs) throws IOException, InterruptedException, TimeoutException {
        send();
        acks.awaitAll(producer::flush, timeoutMs);
    }

    /** Gives back the room of records never sent (the task failed or was killed first). */
    public void discard() {
        grouping.sealAll(this::ready);
        unreserveFrom(0);
        pending.clear();
        pendingCarried = 0;
    }

    /**
     * On a KPL-call thread: adds the pending records from index {@code from}; returns the index of
     * one the KPL refused (the reason in {@link #refusal}), or -1 when all were added.
     */
    private int addFrom(int from) {
        for (int i = from; i < pending.size(); i++) {
            KplRecord record = pending.get(i);
            sent = i + 1; // from here on its room is the KPL's to give back, whatever add does
            try {
                producer.add(record, acks);
            } catch (IllegalArgumentException e) {
                refusal = e;
                return i;
            }
        }
        return -1;
    }

    private void unreserveFrom(int index) {
        for (int i = index; i < pending.size(); i++) {
            pending.get(i).carried().forEach(record -> producer.unreserve(record.size()));
        }
    }
}
