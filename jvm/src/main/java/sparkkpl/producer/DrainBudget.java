package sparkkpl.producer;

/**
 * How many records and bytes a producer may have outstanding in one {@link Lane}: what Kinesis
 * acknowledged of the lane's records in a target wait, between a floor and the queue limits.
 *
 * <p>Why not the queue limits alone: at a shard's quota the daemon sends more than the shard takes (150 %
 * where it runs its own limiter, {@code RateLimit}; all it is handed where it does not), and each throttled
 * record goes back to the end of the KPL's queue for that shard. A record's wait is then about (outstanding in its shard ÷ the shard's acknowledged rate), with
 * an exponential tail, and a wait past {@code RecordTtl} expires the record (docs/backpressure.md has
 * the measurements). Holding each shard's outstanding at its drain rate times a target wait keeps the
 * mean wait at that target whatever the executor count, stream width, key spread or record size; tasks
 * block instead. With a target of 1/{@value #TTL_SHARE} of {@code RecordTtl}, a record outlives it
 * with a probability of about e^-{@value #TTL_SHARE}. The budget is per lane because a rate measured
 * over a whole stream is the hot shard's rate divided by its share of the rows: a producer that follows
 * it lets the hot shard's backlog grow to the queue limits.
 *
 * <p>The rate is measured over windows of {@value #WINDOW_MS} ms of the lane's busy time (something
 * outstanding, or a task waiting), and only from windows in which a task waited for room: otherwise it
 * measures how fast the tasks add, not how fast Kinesis takes; idle time (a streaming trigger's gap)
 * would only dilute it. An unthrottled shard answers in a fraction of the target wait, so there the
 * budget grows past the queue limits within a window or two and the queue limits rule.
 *
 * <p>A new lane starts small (1/{@value #START_SHARE} of {@code queueLimit}, 1/{@value #START_SHARE_BYTES} of
 * {@code queueLimitBytes}) and, until its first measurement, grows by
 * what Kinesis acknowledges of it while a task waits, as TCP's slow start does: about doubling each round trip.
 * What several producers admit into one shard before they measure cannot be called back, and none of them
 * knows how many others write the shard (records whose keys the sink chooses, a stream that places records
 * itself: all of them meet in one shard as readily as a hot key's); growing by acknowledgements, their budgets
 * together grow by what the shard drains, not by N times a start. Records answered promptly (within
 * 1/{@value #PROMPT_SHARE} of the target wait of their add, no attempt throttled) waited in no queue, so they
 * grow it {@value #PROMPT_GROWTH} times as fast, as TCP's HyStart leaves slow start once round trips lengthen: a
 * fresh producer's lanes on unthrottled shards reach the queue limits in half the round trips, while producers
 * that share a shard at its quota see their records wait or get throttled from the first round trip on, and
 * grow by the drain as before; what they admitted faster is bounded by what the shard answered promptly. After
 * the first measurement each follows
 * its own share of the drain, so that N producers' budgets add up to the shard's drain in the target wait;
 * their floors add up to N floors, which is why the floor is a small share of the start. Not thread-safe:
 * {@link OutstandingLimit} calls it under its lock.
 */
final class DrainBudget {
    /** The target wait is this share of {@code RecordTtl}. */
    static final int TTL_SHARE = 15;
    /** The target wait is never shorter: a budget under one request's round trip would shrink itself. */
    static final long MIN_TARGET_WAIT_MS = 1_000;
    static final long WINDOW_MS = 1_000;
    /**
     * A lane starts at this share of {@code queueLimit}: 97 records at the default, about a tenth of a second of
     * a shard's 1,000 records. 32 producers starting on one shard at once admit 3,100 records, about three seconds
     * of them; one producer reaches the queue limits from there in about ten round trips of slow start, five where
     * Kinesis answers promptly. Caps raised
     * out of reach raise it with them.
     */
    static final int START_SHARE = 1024;
    /**
     * A lane starts at this share of {@code queueLimitBytes}: 64 KiB at the default, about the same share of a shard's
     * second as the records start (a shard takes 1 MiB a second), so that 32 producers on one shard admit 2 MiB, the
     * target wait. At 1/1024 (16 KiB) a lane held less than one aggregate of 1 KB rows; at 1,024 shards each lane
     * carries about a dozen aggregates in a 300,000-row write and spent it in slow start, the tasks waiting
     * (bench/results/wide-stream-levers/README.md, "Lanes that start below one aggregate").
     */
    static final int START_SHARE_BYTES = 256;
    /**
     * An acknowledgement within this share of the target wait (250 ms at the default {@code RecordTtl}) waited in
     * no queue: a KPL buffer's time ({@code RecordMaxBufferedTime}, 100 ms at most by default) and a round trip.
     */
    static final int PROMPT_SHARE = 8;
    /** What a prompt acknowledgement in slow start adds to the budget, in times what it acknowledged: ×4 a round trip. */
    static final int PROMPT_GROWTH = 3;
    /** A lane's floor, as a share of the queue limits (12 records, 2 KiB at the defaults): one producer of many on a shard holds little. */
    static final int FLOOR_SHARE = 8 * START_SHARE;
    /** Weight of the newest window's rate in the running estimate. */
    private static final double NEWEST_WEIGHT = 0.5;
    private static final long WINDOW_NANOS = WINDOW_MS * 1_000_000;

    /** How a producer budgets its lanes: following what each drains, or at the queue limits alone. */
    record Policy(long queueLimit, long queueLimitBytes, double targetWaitSeconds) {
        /** The queue limits alone, whatever the drain: for tests of the queue limits themselves. */
        static Policy queueLimitsOnly(long queueLimit, long queueLimitBytes) {
            return new Policy(queueLimit, queueLimitBytes, Double.POSITIVE_INFINITY);
        }

        /** Each lane follows what Kinesis acknowledges of it, within the queue limits. */
        static Policy following(long queueLimit, long queueLimitBytes, long recordTtlMs) {
            long targetWaitMs = Math.max(MIN_TARGET_WAIT_MS, recordTtlMs / TTL_SHARE);
            return new Policy(queueLimit, queueLimitBytes, targetWaitMs / 1_000.0);
        }

        boolean followsDrain() {
            return targetWaitSeconds != Double.POSITIVE_INFINITY;
        }

        /** The budget of a lane first met now, idle until {@link #busy}. */
        DrainBudget newLane() {
            if (!followsDrain()) {
                return new DrainBudget(this, queueLimit, queueLimitBytes, queueLimit, queueLimitBytes);
            }
            long startRecords = Math.max(1, queueLimit / START_SHARE);
            long startBytes = Math.max(1, queueLimitBytes / START_SHARE_BYTES);
            return new DrainBudget(this, startRecords, startBytes, Math.max(1, queueLimit / FLOOR_SHARE),
                Math.max(1, queueLimitBytes / FLOOR_SHARE));
        }
    }

    private final Policy policy;
    private final long floorRecords;
    private final long floorBytes;
    private long records;
    private long bytes;
    /** Busy time of the current window before {@link #busySince}. */
    private long windowBusyNanos;
    /** When the lane last became busy; -1 while idle. */
    private long busySince = -1;
    private long windowRecords;
    private long windowBytes;
    private boolean windowBound;
    /** What Kinesis takes of the lane, as measured; negative until the first measurement (slow start). */
    private double recordsPerSecond = -1;
    private double bytesPerSecond;

    private DrainBudget(Policy policy, long startRecords, long startBytes, long floorRecords, long floorBytes) {
        this.policy = policy;
        this.records = startRecords;
        this.bytes = startBytes;
        this.floorRecords = Math.min(floorRecords, startRecords);
        this.floorBytes = Math.min(floorBytes, startBytes);
    }

    long records() {
        return records;
    }

    long bytes() {
        return bytes;
    }

    /** The lane has something outstanding, or a task waits for room in it. */
    void busy(long nowNanos) {
        if (busySince < 0) {
            busySince = nowNanos;
        }
    }

    /** The lane has nothing outstanding and nobody waits: the time until it is busy again is not measured. */
    void idle(long nowNanos) {
        roll(nowNanos);
        if (busySince >= 0) {
            windowBusyNanos += nowNanos - busySince;
            busySince = -1;
        }
    }

    /** A task waits for room now. */
    void bound(long nowNanos) {
        busy(nowNanos);
        roll(nowNanos);
        windowBound = true;
    }

    /**
     * Kinesis acknowledged {@code count} records of {@code size} bytes in all. Before the first measurement, while a
     * task waits, the budget grows by them, {@value #PROMPT_GROWTH} times that if they were answered promptly (slow
     * start).
     *
     * @param latencyNanos from their add to the KPL to its answer
     * @param throttled whether Kinesis throttled an attempt of them
     * @param waiting whether a task waits for room in the lane now
     */
    void acknowledged(long count, long size, long latencyNanos, boolean throttled, boolean waiting, long nowNanos) {
        roll(nowNanos);
        windowRecords += count;
        windowBytes += size;
        windowBound |= waiting;
        if (waiting && recordsPerSecond < 0 && policy.followsDrain()) {
            long growth = !throttled && latencyNanos <= promptNanos() ? PROMPT_GROWTH : 1;
            records = Math.min(policy.queueLimit(), records + growth * count);
            bytes = Math.min(policy.queueLimitBytes(), bytes + growth * size);
        }
    }

    private double promptNanos() {
        return policy.targetWaitSeconds() * 1e9 / PROMPT_SHARE;
    }

    /** Closes the window once it has been busy long enough, following its rate if a task waited in it. */
    private void roll(long nowNanos) {
        long busyNanos = windowBusyNanos + (busySince >= 0 ? nowNanos - busySince : 0);
        if (busyNanos < WINDOW_NANOS) {
            return;
        }
        if (windowBound && policy.followsDrain()) {
            follow(windowRecords * 1e9 / busyNanos, windowBytes * 1e9 / busyNanos);
        }
        windowBusyNanos = 0;
        if (busySince >= 0) {
            busySince = nowNanos;
        }
        windowRecords = 0;
        windowBytes = 0;
        windowBound = false;
    }

    private void follow(double recordRate, double byteRate) {
        if (recordsPerSecond < 0) {
            recordsPerSecond = recordRate;
            bytesPerSecond = byteRate;
        } else {
            recordsPerSecond += NEWEST_WEIGHT * (recordRate - recordsPerSecond);
            bytesPerSecond += NEWEST_WEIGHT * (byteRate - bytesPerSecond);
        }
        records = within(recordsPerSecond * policy.targetWaitSeconds(), floorRecords, policy.queueLimit());
        bytes = within(bytesPerSecond * policy.targetWaitSeconds(), floorBytes, policy.queueLimitBytes());
    }

    private static long within(double value, long floor, long ceiling) {
        return value >= ceiling ? ceiling : Math.max(floor, (long) value);
    }
}
