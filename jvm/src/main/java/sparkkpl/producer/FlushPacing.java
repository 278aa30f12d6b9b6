package sparkkpl.producer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Spaces the flushes that tasks waiting at commit make for the tasks after them, by what a flush costs
 * the daemon. The KPL's flush hands its collector's records on only 80 ms later ({@code pipeline.h}), so
 * a task's flushes mostly shorten the waits of the tasks that commit after it: while small tasks follow
 * one another, a flush at each acknowledgement keeps their last aggregates from waiting out
 * RecordMaxBufferedTime in the collector. A flush costs the daemon about 150 µs plus up to 2 µs per
 * shard its aggregator has met (docs/performance.md, "Many small tasks"), so these flushes are spaced
 * to take at most about a quarter of one core.
 */
final class FlushPacing {
    static final long FLUSH_BASE_NANOS = TimeUnit.MICROSECONDS.toNanos(150);
    static final long FLUSH_PER_SHARD_NANOS = 2_000;
    /** The paced flushes take at most one {@code CORE_SHARE}th of a daemon core. */
    static final int CORE_SHARE = 4;
    private final AtomicLong flushedAt = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(1));

    /** Notes a flush made at {@code now}, paced or not. */
    void flushed(long now) {
        flushedAt.set(now);
    }

    /**
     * Whether a paced flush is due at {@code now}, the daemon having met {@code shards} shards; claimed
     * if so, so that one of the tasks asking at once makes it.
     */
    boolean claim(long now, int shards) {
        long last = flushedAt.get();
        return now - last >= spacingNanos(shards) && flushedAt.compareAndSet(last, now);
    }

    static long spacingNanos(int shards) {
        return CORE_SHARE * (FLUSH_BASE_NANOS + FLUSH_PER_SHARD_NANOS * shards);
    }
}
