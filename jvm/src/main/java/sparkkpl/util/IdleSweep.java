package sparkkpl.util;

import java.util.Collection;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Forgets, at most once per interval, the entries of a long-lived cache that were not used lately, so
 * that a query meeting many names (streams rows name) keeps flat memory. Thread-safe: of callers that
 * find the interval over at once, one sweeps.
 */
public final class IdleSweep {
    private final long intervalNanos;
    private final AtomicLong sweptAt;

    /** A sweep at most every {@code intervalNanos}, the first that long after {@code nowNanos}. */
    public IdleSweep(long intervalNanos, long nowNanos) {
        this.intervalNanos = intervalNanos;
        this.sweptAt = new AtomicLong(nowNanos);
    }

    /**
     * Removes from {@code entries} those that {@code unused} says were not used lately, when the interval
     * has passed at {@code nowNanos}. Each entry is tested holding its own lock, which its users hold to
     * change it, so that one being used at that moment is tested as it ends up.
     */
    public <E> void sweep(Collection<E> entries, long nowNanos, Predicate<E> unused) {
        long swept = sweptAt.get();
        if (nowNanos - swept < intervalNanos || !sweptAt.compareAndSet(swept, nowNanos)) {
            return;
        }
        entries.removeIf(entry -> {
            synchronized (entry) {
                return unused.test(entry);
            }
        });
    }
}
