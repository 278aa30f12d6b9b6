package sparkkpl.producer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.util.OffTaskThread;

/**
 * Producers shared by key: created on first use, counted while tasks hold them, closed once unused
 * for their idle timeout. A producer is made outside the pool's lock (placing its daemon, finding the
 * region and starting it take seconds), so other keys' acquires and releases never wait for it; the
 * tasks wanting the same key meanwhile wait for that one creation, and fail with it. A producer that
 * broke is detached (new tasks get a new one) but closed only when its last holder releases it:
 * closing it under them would fail their records still in flight. Thread-safe; the clock and the
 * scheduler are given, so that tests can drive time.
 *
 * @param <K> what makes two users share a producer
 */
final class ProducerPool<K, P extends ProducerPool.Pooled> {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerPool.class);

    /** What the pool needs of a producer. */
    interface Pooled {
        /** Whether it gave up, so new users need another one. */
        boolean isBroken();

        /**
         * Called on each acquirer's thread, outside the pool's lock, before it uses the producer;
         * may wait, and throws when the producer cannot be used now.
         */
        void awaitReady();

        long idleTimeoutMs();

        void close();
    }

    /** Runs the pool's closing off its callers' threads, after a delay in milliseconds (0: at once). */
    interface Scheduler {
        void schedule(Runnable task, long delayMs);
    }

    /**
     * A producer made or being made: a creation that fails leaves the pool before its waiters learn of
     * it, so the next acquirer tries again.
     */
    private static final class Entry<P> {
        final CompletableFuture<P> creation = new CompletableFuture<>();
        int holders;
        long idleSinceNanos;

        /** The producer, or null while it is being made. */
        P producer() {
            return creation.getNow(null);
        }
    }

    private final LongSupplier nanoClock;
    private final Scheduler scheduler;
    private final Map<K, Entry<P>> entries = new HashMap<>();
    /** Broken producers still held; guarded by {@code entries}' lock. */
    private final List<Entry<P>> detached = new ArrayList<>();

    /** @param nanoClock a monotonic clock in nanoseconds, as System::nanoTime */
    ProducerPool(LongSupplier nanoClock, Scheduler scheduler) {
        this.nanoClock = nanoClock;
        this.scheduler = scheduler;
    }

    /** The producer for {@code key}, made by {@code create} if there is none or it broke; pair with {@link #release}. */
    P acquire(K key, Supplier<P> create) {
        P producer = counted(key, create);
        try {
            producer.awaitReady();
        } catch (RuntimeException | Error e) {
            // Uncounted, it still closes when idle or broken: a held one would keep its daemon (and
            // the KPL's once-a-second relaunch of a daemon that cannot be placed) for the JVM's life.
            release(producer);
            throw e;
        }
        return producer;
    }

    /** The producer for {@code key}, its holders counted with the caller. */
    private P counted(K key, Supplier<P> create) {
        Entry<P> entry;
        boolean mine;
        synchronized (entries) {
            entry = entries.get(key);
            P existing = entry == null ? null : entry.producer();
            if (existing != null && existing.isBroken()) {
                entries.remove(key);
                detach(entry);
                entry = null;
            }
            mine = entry == null;
            if (mine) {
                entry = new Entry<>();
                entries.put(key, entry);
            }
            entry.holders++;
        }
        if (mine) {
            make(key, entry, create);
        }
        return OffTaskThread.awaitUninterruptibly(entry.creation);
    }

    /** Makes the entry's producer, on the caller's thread and outside the lock. */
    private void make(K key, Entry<P> entry, Supplier<P> create) {
        P made;
        try {
            made = create.get();
        } catch (RuntimeException | Error e) {
            synchronized (entries) {
                entries.remove(key, entry);
                entry.creation.completeExceptionally(e);
            }
            return;
        }
        synchronized (entries) {
            if (entries.get(key) == entry) {
                entry.creation.complete(made);
                return;
            }
        }
        // closeAll ran meanwhile: the JVM is exiting, and nothing would close this one.
        closeEach(List.of(made));
        entry.creation.completeExceptionally(new IllegalStateException("The JVM is exiting: its KPL producers are closed"));
    }

    /** Closes a broken producer now if nobody holds it, else when its last holder releases it. */
    private void detach(Entry<P> entry) {
        if (entry.holders == 0) {
            closeSoon(entry.producer());
        } else {
            detached.add(entry);
        }
    }

    void release(P producer) {
        synchronized (entries) {
            for (Entry<P> entry : entries.values()) {
                if (entry.producer() == producer && --entry.holders == 0) {
                    entry.idleSinceNanos = nanoClock.getAsLong();
                    scheduler.schedule(this::closeIdle, producer.idleTimeoutMs());
                }
            }
            Iterator<Entry<P>> held = detached.iterator();
            while (held.hasNext()) {
                Entry<P> entry = held.next();
                if (entry.producer() == producer && --entry.holders == 0) {
                    held.remove();
                    closeSoon(producer);
                }
            }
        }
    }

    private void closeSoon(P producer) {
        scheduler.schedule(() -> closeEach(List.of(producer)), 0);
    }

    private void closeIdle() {
        List<P> idle = new ArrayList<>();
        synchronized (entries) {
            Iterator<Entry<P>> all = entries.values().iterator();
            while (all.hasNext()) {
                Entry<P> entry = all.next();
                long idleMs = TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - entry.idleSinceNanos);
                if (entry.holders == 0 && idleMs >= entry.producer().idleTimeoutMs()) {
                    all.remove();
                    idle.add(entry.producer());
                }
            }
        }
        closeEach(idle);
    }

    /** Closes every producer, held or not: the JVM is exiting. */
    void closeAll() {
        List<P> all = new ArrayList<>();
        synchronized (entries) {
            entries.values().stream().map(Entry::producer).filter(Objects::nonNull).forEach(all::add);
            detached.forEach(entry -> all.add(entry.producer()));
            entries.clear();
            detached.clear();
        }
        closeEach(all);
    }

    /** Closes each one even when another fails: a producer skipped here would keep its daemon. */
    private static void closeEach(List<? extends Pooled> producers) {
        for (Pooled producer : producers) {
            try {
                producer.close();
            } catch (RuntimeException | Error e) {
                LOG.error("Closing a KPL producer failed", e);
            }
        }
    }

    /** The producers new users would get, detached ones and those being made excluded. */
    List<P> current() {
        synchronized (entries) {
            return entries.values().stream().map(Entry::producer).filter(Objects::nonNull).toList();
        }
    }

    /** How many producers are open, detached ones included. */
    int open() {
        synchronized (entries) {
            return current().size() + detached.size();
        }
    }
}
