package sparkkpl.producer;

/**
 * How many records and bytes a producer may have outstanding in one {@link Lane}: what Kinesis
 * acknowledged of the lane's records in a target wait, between a floor and the queue caps.
 *
 * <p>Why not the caps alone: at a shard's quota the KPL's own limiter sends 150 % of what the shard
 * takes ({@code RateLimit}), and each throttled record goes back to the end of the KPL's queue for that
 * shard. A record's wait is then about (outstanding in its shard ÷ the shard's acknowledged rate), with
 * an exponential tail, and a wait past {@code RecordTtl} expires the record (docs/backpressure.md has
 * the measurements). Holding each shard's outstanding at its drain rate times a target wait keeps the
 * mean wait at that target whatever the executor count, stream width, key spread or record size; tasks
 * block instead. With a target of 1/{@value #TTL_SHARE} of {@code RecordTtl}, a record outlives it
 * with a probability of about e^-{@value #TTL_SHARE}. The budget is per lane because a rate measured
 * over a whole stream is the hot shard's rate divided by its share of the rows: a producer that follows
 * it lets the hot shard's backlog grow to the caps.
 *
 * <p>The rate is measured over windows of {@value #WINDOW_MS} ms of the lane's busy time (something
 * outstanding, or a task waiting), and only from windows in which a task waited for room: otherwise it
 * measures how fast the tasks add, not how fast Kinesis takes; idle time (a streaming trigger's gap)
 * would only dilute it. An unthrottled shard answers in a fraction of the target wait, so there the
 * budget grows past the caps within a window or two and the caps rule.
 *
 * <p>A new shard lane starts small (1/{@value #SHARD_START_SHARE} of the caps): what several producers
 * admit into one shard before their first measurement cannot be called back, and a shard takes only
 * 1 MiB a second whoever sends. A stream lane (records whose shard is not known) starts at 1/{@value
 * #STREAM_START_SHARE} of the caps, as a whole stream may take much more. Not thread-safe: {@link
 * OutstandingLimit} calls it under its lock.
 */
final class DrainBudget {
    /** The target wait is this share of {@code RecordTtl}. */
    static final int TTL_SHARE = 15;
    /** The target wait is never shorter: a budget under one request's round trip would shrink itself. */
    static final long MIN_TARGET_WAIT_MS = 1_000;
    static final long WINDOW_MS = 1_000;
    /**
     * A shard lane starts at this share of the caps: 128 KiB at the default caps, an eighth of a second
     * of a shard's byte limit, enough for one producer to keep the shard busy at the KPL's usual
     * buffering, and 4 MiB (four seconds of the shard) for 32 producers that start on it at once. Caps
     * raised out of reach raise it with them.
     */
    static final int SHARD_START_SHARE = 128;
    /** A shard lane's floor, as a share of its start: one producer of many on a shard holds little. */
    static final int SHARD_FLOOR_SHARE = 16;
    static final int STREAM_START_SHARE = 16;
    static final int STREAM_FLOOR_SHARE = 64;
    /** Weight of the newest window's rate in the running estimate. */
    private static final double NEWEST_WEIGHT = 0.5;
    private static final long WINDOW_NANOS = WINDOW_MS * 1_000_000;

    /** How a producer budgets its lanes: following what each drains, or at the caps alone. */
    record Policy(long maxRecords, long maxBytes, double targetWaitSeconds) {
        /** The caps alone, whatever the drain: for tests of the caps themselves. */
        static Policy capsOnly(long maxRecords, long maxBytes) {
            return new Policy(maxRecords, maxBytes, Double.POSITIVE_INFINITY);
        }

        /** Each lane follows what Kinesis acknowledges of it, within the caps. */
        static Policy following(long maxRecords, long maxBytes, long recordTtlMs) {
            long targetWaitMs = Math.max(MIN_TARGET_WAIT_MS, recordTtlMs / TTL_SHARE);
            return new Policy(maxRecords, maxBytes, targetWaitMs / 1_000.0);
        }

        boolean followsDrain() {
            return targetWaitSeconds != Double.POSITIVE_INFINITY;
        }

        /** The budget of a lane first met now, idle until {@link #busy}. */
        DrainBudget newLane(Lane lane) {
            if (!followsDrain()) {
                return new DrainBudget(this, maxRecords, maxBytes, maxRecords, maxBytes);
            }
            if (lane.isShard()) {
                long startRecords = Math.max(1, maxRecords / SHARD_START_SHARE);
                long startBytes = Math.max(1, maxBytes / SHARD_START_SHARE);
                return new DrainBudget(this, startRecords, startBytes, Math.max(1, startRecords / SHARD_FLOOR_SHARE),
                    Math.max(1, startBytes / SHARD_FLOOR_SHARE));
            }
            return new DrainBudget(this, Math.max(1, maxRecords / STREAM_START_SHARE),
                Math.max(1, maxBytes / STREAM_START_SHARE), Math.max(1, maxRecords / STREAM_FLOOR_SHARE),
                Math.max(1, maxBytes / STREAM_FLOOR_SHARE));
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
     * Kinesis acknowledged {@code count} records of {@code size} bytes in all.
     *
     * @param waiting whether a task waits for room in the lane now
     */
    void acknowledged(long count, long size, boolean waiting, long nowNanos) {
        roll(nowNanos);
        windowRecords += count;
        windowBytes += size;
        windowBound |= waiting;
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
        records = within(recordsPerSecond * policy.targetWaitSeconds(), floorRecords, policy.maxRecords());
        bytes = within(bytesPerSecond * policy.targetWaitSeconds(), floorBytes, policy.maxBytes());
    }

    private static long within(double value, long floor, long ceiling) {
        return value >= ceiling ? ceiling : Math.max(floor, (long) value);
    }
}
