package sparkkpl.producer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * When a producer last flushed, by anyone, and whether a flush that a waiting task asks for is due; every
 * flush of a producer goes through it. The KPL's flush visits every shard its daemon has met, and waiting
 * tasks are woken by every acknowledgement, so a flush at each wake-up would cost the daemon in proportion
 * to the shard count per row (docs/performance.md, "Thousands of shards"), and a commit's flushes by the
 * clock cost 6 to 9 flushes per task on a wide stream ("Many small tasks"). Waiting tasks therefore flush
 * only when no flush came within a spacing:
 * <ul>
 *   <li>{@link #BLOCKED_SPACING_NANOS} for a task blocked at the queue limit;</li>
 *   <li>{@link #laterTasksSpacingNanos} for a task waiting at commit: its first flush, which sends its
 *   last aggregates, goes out at once unless another went within the spacing (then the next one, or
 *   RecordMaxBufferedTime, sends them), and its later flushes mostly serve the tasks
 *   committing after it: the KPL's flush hands its collector's records on only 80 ms later
 *   ({@code pipeline.h}), and while small tasks follow one another, a flush at each acknowledgement keeps
 *   their last aggregates from waiting out RecordMaxBufferedTime in the collector (docs/performance.md,
 *   "Many small tasks").</li>
 * </ul>
 */
final class FlushPacing {
    /**
     * The KPL's default RecordMaxBufferedTime, after which its collector sends what it holds anyway: a
     * task blocked at the queue limit needs no flush more often.
     */
    static final long BLOCKED_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** What a flush costs the daemon: about 150 µs plus up to 2 µs per shard its aggregator has met. */
    static final long FLUSH_BASE_NANOS = TimeUnit.MICROSECONDS.toNanos(150);
    static final long FLUSH_PER_SHARD_NANOS = 2_000;
    /** The flushes for later tasks take at most one {@code CORE_SHARE}th of a daemon core. */
    static final int CORE_SHARE = 4;
    private final AtomicLong flushedAt = new AtomicLong(System.nanoTime() - TimeUnit.SECONDS.toNanos(1));

    /**
     * Whether a flush is due at {@code now}: none came within {@code spacingNanos}. Claimed if so, so
     * that only one of the tasks asking at once makes it.
     */
    boolean claim(long now, long spacingNanos) {
        long last = flushedAt.get();
        return now - last >= spacingNanos && flushedAt.compareAndSet(last, now);
    }

    /** The spacing of the flushes tasks at commit make for later tasks, the daemon having met {@code shards} shards. */
    static long laterTasksSpacingNanos(int shards) {
        return CORE_SHARE * (FLUSH_BASE_NANOS + FLUSH_PER_SHARD_NANOS * shards);
    }
}
