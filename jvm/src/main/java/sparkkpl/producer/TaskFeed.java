package sparkkpl.producer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import sparkkpl.kinesis.KinesisRecord;

/**
 * One task's records on their way into the shared producer. Its {@link RecordGrouping} turns the
 * task's records into the KPL's user records (each alone, or aggregates); the task's thread reserves
 * room under the queue limit for each complete one, and they are added to the KPL in batches on a
 * thread Spark never interrupts ({@link SharedProducer#callKpl}), one hand-off per batch rather than
 * per record. Not thread-safe: one task, one thread.
 */
public final class TaskFeed {
    /** Task records per hand-off: enough that the hand-off costs little per record. */
    static final int BATCH_RECORDS = 256;
    private static final Runnable NOTHING = () -> { };

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
    /**
     * The KPL's RecordMaxBufferedTime: how often the grouping looks at what it holds for its age, in
     * the task's own time, time spent waiting for room left out (sealing then would only shrink
     * aggregates: nothing more can be sent while the queue is full).
     */
    private final long ageCheckNanos;
    private long nextAgeCheck;
    /** KPL records the grouping just completed, not holding room yet. */
    private final List<KplRecord> sealed = new ArrayList<>();
    /** Hands a completed KPL record to {@link #sealed}: one object, not one per row. */
    private final Consumer<KplRecord> seal = sealed::add;
    /** KPL records holding room, not handed to the KPL yet. */
    private final List<KplRecord> pending = new ArrayList<>();
    /** The task records the pending KPL records carry. */
    private int pendingCarried;
    /** How many pending KPL records have been handed to the KPL (added, or refused and given back). */
    private int sent;
    /** The KPL's reason for the record {@link #addFrom} stopped at. */
    private IllegalArgumentException refusal;
    /** With {@code ordering=key}: the records held until the one before them in their shard is answered. */
    private OneInFlightPerShard inOrder;

    /**
     * @param maxBufferedMs the KPL's RecordMaxBufferedTime: no record waits in the task much longer
     *     while rows keep coming (a source that stops altogether sends what is held at commit)
     */
    public TaskFeed(SharedProducer producer, TaskAcks acks, TaskQueueStats stats, long timeoutMs,
                    RefusalHandler onRefused, RecordGrouping grouping, long maxBufferedMs) {
        this.ageCheckNanos = Math.max(1, TimeUnit.MILLISECONDS.toNanos(maxBufferedMs));
        this.nextAgeCheck = System.nanoTime() + ageCheckNanos;
        this.producer = producer;
        this.acks = acks;
        this.stats = stats;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.onRefused = onRefused;
        this.grouping = grouping;
    }

    /**
     * Keeps each key's records in the task's order in their shard ({@code ordering=key}): one KPL record
     * per shard with the KPL at a time ({@link OneInFlightPerShard}).
     */
    public TaskFeed inKeyOrder() {
        inOrder = new OneInFlightPerShard();
        return this;
    }

    /**
     * Takes one record (row {@code rowNumber} of the task); whatever it completes waits for room
     * under the queue limit (see {@link #queueSealed}).
     *
     * @throws TimeoutException when the queue stayed full for the task's timeout
     * @throws IOException when a record the KPL refused fails the task
     */
    public void add(KinesisRecord record, long rowNumber) throws IOException, InterruptedException, TimeoutException {
        group(new TaskRecord(record, rowNumber, record.bytes()));
    }

    /**
     * As {@link #add}, but the record goes as a KPL record of its own, never into an aggregate: its
     * stream places records itself, or how it does is not known.
     */
    public void addAlone(KinesisRecord record, long rowNumber) throws IOException, InterruptedException,
            TimeoutException {
        seal.accept(KplRecord.alone(new TaskRecord(record, rowNumber, record.bytes())));
        queue();
    }

    private void group(TaskRecord record) throws IOException, InterruptedException, TimeoutException {
        grouping.add(record, seal);
        queue();
    }

    /** Queues what was sealed, and hands a full or aged batch, or a shard's next record in key order, to the KPL. */
    private void queue() throws IOException, InterruptedException, TimeoutException {
        queueSealed();
        if (releaseAnswered() || pendingCarried >= BATCH_RECORDS || heldTooLong()) {
            handOff();
        }
    }

    /** In key order: queues the next record of each shard whose record at the KPL was answered; whether any. */
    private boolean releaseAnswered() {
        if (inOrder == null) {
            return false;
        }
        int before = pending.size();
        inOrder.releaseAnswered(pending);
        for (int i = before; i < pending.size(); i++) {
            pendingCarried += pending.get(i).count();
        }
        return pending.size() > before;
    }

    /**
     * Every RecordMaxBufferedTime of the task's time: seals what the grouping already held at the
     * last look, and says whether records wait for a hand-off, so that none waits in the task more
     * than about twice RecordMaxBufferedTime for its aggregate or its batch to fill.
     */
    private boolean heldTooLong() throws IOException, InterruptedException, TimeoutException {
        long now = System.nanoTime();
        if (now - nextAgeCheck < 0) {
            return false;
        }
        nextAgeCheck = now + ageCheckNanos;
        grouping.sealAged(seal);
        queueSealed();
        return !pending.isEmpty();
    }

    /**
     * Reserves room for each KPL record the grouping completed and queues it for the KPL. Before
     * waiting for room it hands the KPL what is queued, whose acknowledgements make room; open
     * aggregates hold no room, so they stay open and fill up however long the wait.
     */
    private void queueSealed() throws IOException, InterruptedException, TimeoutException {
        try {
            for (KplRecord record : sealed) {
                if (!producer.tryReserve(record, stats)) {
                    handOff();
                    long waitStarted = System.nanoTime();
                    reserve(record);
                    nextAgeCheck += System.nanoTime() - waitStarted;
                }
                if (inOrder == null || inOrder.goesNow(record)) {
                    pending.add(record);
                    pendingCarried += record.count();
                }
            }
        } finally {
            sealed.clear();
        }
    }

    /**
     * Waits for room for {@code record}. In key order the room may be held by the task's own records
     * waiting behind others of their shard, which only the task's thread sends: it sends each as the one
     * before it is answered, and waits for room as any task does once it holds none.
     */
    private void reserve(KplRecord record) throws IOException, InterruptedException, TimeoutException {
        long started = System.nanoTime();
        long deadline = started + timeoutNanos;
        boolean waited = false;
        try {
            while (inOrder != null && inOrder.held() > 0) {
                waited = true;
                producer.flushForBlockedTasks();
                inOrder.awaitAnswer(FlushPacing.BLOCKED_SPACING_NANOS);
                if (releaseAnswered()) {
                    handOff();
                }
                if (producer.tryReserve(record, stats)) {
                    return;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new TimeoutException("the producer stayed at its queue limit for "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms with " + inOrder.held() + " of this task's "
                        + "records waiting, in key order, behind others of their shards");
                }
            }
        } finally {
            // Time behind the task's own records of the same shards is backpressure too, which the queue limit
            // (counting the wait below) never sees.
            if (waited) {
                stats.waitedInKeyOrder(System.nanoTime() - started);
            }
        }
        producer.reserve(record, Math.max(0, deadline - System.nanoTime()), stats);
    }

    /**
     * Adds every record the task holds to the KPL, in order, aggregates sealed however full they
     * are. Each task record inside a KPL record the KPL refuses goes to the refusal handler; if that
     * fails the task, the records after it are not sent.
     */
    public void send() throws IOException, InterruptedException, TimeoutException {
        grouping.sealAll(seal);
        queueSealed();
        releaseAnswered();
        handOff();
    }

    /** {@link #send} on each of a task's feeds. */
    public static void send(List<TaskFeed> feeds) throws IOException, InterruptedException, TimeoutException {
        for (TaskFeed feed : feeds) {
            feed.send();
        }
    }

    /**
     * Adds the queued KPL records to the KPL, in order, leaving open aggregates open: a full batch
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

    /**
     * Sends what the task holds in each of its feeds (one per producer, sharing the task's
     * acknowledgements), then waits until Kinesis has acknowledged or finally failed every record of
     * the task, sending again the records of any aggregate Kinesis stored where a consumer would drop it.
     */
    public static void finish(List<TaskFeed> feeds, long timeoutMs) throws IOException, InterruptedException,
            TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        send(feeds);
        Runnable flushAll = () -> feeds.forEach(feed -> feed.producer.flushForCommits());
        Runnable flushForLaterTasks = () -> feeds.forEach(TaskFeed::flushForLaterTasks);
        TaskAcks acks = feeds.get(0).acks;
        while (!acks.awaitAll(flushAll, flushForLaterTasks, msUntil(deadline)) || holdAny(feeds)) {
            if (holdAny(feeds)) {
                acks.throwIfProducerFailed(); // a record the KPL lost may still be stored: none may go after it
            }
            for (TaskFeed feed : feeds) {
                feed.resendMisplacedAndStarved();
                feed.send();
            }
        }
    }

    /** Whether records of any of the feeds wait, in key order, behind others of their shard. */
    private static boolean holdAny(List<TaskFeed> feeds) {
        return feeds.stream().anyMatch(feed -> feed.inOrder != null && feed.inOrder.held() > 0);
    }

    /**
     * Only where the task builds the aggregates: the KPL's own aggregation holds records per shard of a
     * map this producer never lists, so what its flush costs is not known here.
     */
    private void flushForLaterTasks() {
        if (!(grouping instanceof RecordGrouping.EachAlone)) {
            producer.flushForCommits();
        }
    }

    private static long msUntil(long deadline) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    /**
     * Settles the aggregates Kinesis stored in a shard other than the one they were built for (the
     * stream was resharded meanwhile): where a consumer that checks hash ranges keeps every record
     * they stand; otherwise their records are grouped again, from a fresh shard map, and sent. So are
     * the records of this feed that starved at their shard's throughput, never stored.
     */
    public void resendMisplacedAndStarved() throws IOException, InterruptedException, TimeoutException {
        for (KplRecord starved : acks.takeStarved(producer)) {
            for (TaskRecord record : starved.carried()) {
                group(record);
            }
        }
        for (TaskAcks.Misplaced aggregate = acks.pollMisplaced(); aggregate != null; aggregate = acks.pollMisplaced()) {
            boolean kept = grouping.keptWhereStored(aggregate.record(), aggregate.storedIn(),
                aggregate.streamWentMissing());
            acks.settleMisplaced(aggregate, kept);
            if (!kept) {
                for (TaskRecord record : aggregate.record().carried()) {
                    group(record);
                }
            }
        }
    }

    /** Gives back the room of records never sent (the task failed or was killed first). */
    public void discard() {
        grouping.clear();
        sealed.clear();
        if (inOrder != null) {
            inOrder.discard(producer::unreserve);
        }
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
            Runnable answered = inOrder == null ? NOTHING : () -> inOrder.answered(record.lane());
            try {
                producer.add(record, acks, answered);
            } catch (IllegalArgumentException e) {
                answered.run();
                refusal = e;
                return i;
            }
        }
        return -1;
    }

    private void unreserveFrom(int index) {
        for (int i = index; i < pending.size(); i++) {
            producer.unreserve(pending.get(i));
        }
    }
}
