package sparkkpl.producer;

/**
 * How many records and bytes a producer may have outstanding: what Kinesis acknowledged of its
 * records in a target wait, between a floor and the queue caps.
 *
 * <p>Why not the caps alone: at a shard's quota the KPL's own limiter sends 150 % of what the shard
 * takes ({@code RateLimit}), and each throttled record goes back to the end of the KPL's queue. A
 * record's wait is then about (outstanding ÷ acknowledged rate) with an exponential tail: with 16 MiB
 * outstanding from one executor into one shard, 40,000 rows of 1 KB had records expire after 41 s
 * (before this budget), and every executor added to the shard makes it worse. Holding outstanding at the drain
 * rate times a target wait keeps the mean wait at that target whatever the executor count, stream
 * width or record size; tasks block instead. With a target of 1/{@value #TTL_SHARE} of
 * {@code RecordTtl}, a record outlives it with a probability of about e^-{@value #TTL_SHARE}.
 *
 * <p>The rate is measured over windows of {@value #WINDOW_MS} ms, and only from windows in which a
 * task waited for room: otherwise it measures how fast the tasks add, not how fast Kinesis takes.
 * An unthrottled stream answers in a fraction of the target wait, so there the budget grows past
 * the caps within a window or two and the caps rule, as before. A new producer starts at
 * 1/{@value #START_SHARE} of its caps, since what several executors admit before their first
 * measurement cannot be called back. Not thread-safe: {@link OutstandingLimit} calls it under its lock.
 */
final class DrainBudget {
    /** The target wait is this share of {@code RecordTtl}. */
    static final int TTL_SHARE = 15;
    /** The target wait is never shorter: a budget under one request's round trip would shrink itself. */
    static final long MIN_TARGET_WAIT_MS = 1_000;
    static final long WINDOW_MS = 1_000;
    static final int START_SHARE = 16;
    static final int FLOOR_SHARE = 64;
    /** Weight of the newest window's rate in the running estimate. */
    private static final double NEWEST_WEIGHT = 0.5;
    private static final long WINDOW_NANOS = WINDOW_MS * 1_000_000;

    private final long maxRecords;
    private final long maxBytes;
    private final long floorRecords;
    private final long floorBytes;
    private final double targetWaitSeconds;
    private long records;
    private long bytes;
    private long windowStart;
    private long windowRecords;
    private long windowBytes;
    private boolean windowBound;
    private double recordsPerSecond = -1;
    private double bytesPerSecond;

    /** A budget that follows the drain rate, starting at {@code nowNanos}. */
    static DrainBudget following(long maxRecords, long maxBytes, long recordTtlMs, long nowNanos) {
        long targetWaitMs = Math.max(MIN_TARGET_WAIT_MS, recordTtlMs / TTL_SHARE);
        return new DrainBudget(maxRecords, maxBytes, targetWaitMs / 1_000.0, START_SHARE, nowNanos);
    }

    /** The caps alone, whatever the drain: for tests of the caps themselves. */
    static DrainBudget fixed(long maxRecords, long maxBytes) {
        return new DrainBudget(maxRecords, maxBytes, Double.POSITIVE_INFINITY, 1, 0);
    }

    private DrainBudget(long maxRecords, long maxBytes, double targetWaitSeconds, int startShare, long nowNanos) {
        this.maxRecords = maxRecords;
        this.maxBytes = maxBytes;
        this.targetWaitSeconds = targetWaitSeconds;
        this.floorRecords = Math.max(1, maxRecords / FLOOR_SHARE);
        this.floorBytes = Math.max(1, maxBytes / FLOOR_SHARE);
        this.records = Math.max(floorRecords, maxRecords / startShare);
        this.bytes = Math.max(floorBytes, maxBytes / startShare);
        this.windowStart = nowNanos;
    }

    long records() {
        return records;
    }

    long bytes() {
        return bytes;
    }

    /** A task waits for room now. */
    void bound(long nowNanos) {
        roll(nowNanos);
        windowBound = true;
    }

    /**
     * Kinesis acknowledged {@code count} records of {@code size} bytes in all.
     *
     * @param waiting whether a task waits for room now
     */
    void acknowledged(long count, long size, boolean waiting, long nowNanos) {
        roll(nowNanos);
        windowRecords += count;
        windowBytes += size;
        windowBound |= waiting;
    }

    /** Closes the window once it is long enough, following its rate if a task waited in it. */
    private void roll(long nowNanos) {
        long elapsed = nowNanos - windowStart;
        if (elapsed < WINDOW_NANOS) {
            return;
        }
        if (windowBound) {
            follow(windowRecords * 1e9 / elapsed, windowBytes * 1e9 / elapsed);
        }
        windowStart = nowNanos;
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
        records = within(recordsPerSecond * targetWaitSeconds, floorRecords, maxRecords);
        bytes = within(bytesPerSecond * targetWaitSeconds, floorBytes, maxBytes);
    }

    private static long within(double value, long floor, long ceiling) {
        return value >= ceiling ? ceiling : Math.max(floor, (long) value);
    }
}
