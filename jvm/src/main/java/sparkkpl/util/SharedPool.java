package sparkkpl.util;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resources of the JVM shared by key (its KPL producers, the driver's Kinesis clients): created on
 * first use, counted while held, closed once unused for their idle timeout. A resource is made outside
 * the pool's lock (placing a producer's daemon, finding the region and starting it take seconds), so
 * other keys' acquires and releases never wait for it; the users wanting the same key meanwhile wait
 * for that one creation, and fail with it. A resource that broke is detached (new users get a new one)
 * but closed only when its last holder releases it: closing a producer under its tasks would fail their
 * records still in flight. Thread-safe; the clock and the scheduler are given, so that tests can drive
 * time.
 *
 * @param <K> what makes two users share a resource
 */
public final class SharedPool<K, P extends SharedPool.Pooled> {
    private static final Logger LOG = LoggerFactory.getLogger(SharedPool.class);
    /** The JVM's one thread that times the closes, for every pool made by {@link #closedWhenIdle}. */
    private static final ScheduledExecutorService CLOSER =
        Executors.newSingleThreadScheduledExecutor(OffTaskThread.daemonThreads("spark-kpl-idle-closer"));
    /**
     * Where the closes run, each on its own thread: closing a producer flushes and waits for its last records
     * (up to its shutdown timeout), which must not hold up closing another.
     */
    private static final ExecutorService CLOSING = OffTaskThread.newPool("spark-kpl-closing");

    /** What the pool needs of a resource. */
    public interface Pooled {
        /** Whether it gave up, so new users need another one. */
        boolean isBroken();

        /**
         * Called on each acquirer's thread, outside the pool's lock, before it uses the resource;
         * may wait, and throws when the resource cannot be used now.
         */
        void awaitReady();

        long idleTimeoutMs();

        void close();
    }

    /** Runs the pool's closing off its callers' threads, after a delay in milliseconds (0: at once). */
    public interface Scheduler {
        void schedule(Runnable task, long delayMs);
    }

    /**
     * A resource made or being made: a creation that fails leaves the pool before its waiters learn of
     * it, so the next acquirer tries again.
     */
    private static final class Entry<P> {
        final CompletableFuture<P> creation = new CompletableFuture<>();
        int holders;
        long idleSinceNanos;

        /** The resource, or null while it is being made. */
        P resource() {
            return creation.getNow(null);
        }
    }

    private final LongSupplier nanoClock;
    private final Scheduler scheduler;
    private final Map<K, Entry<P>> entries = new HashMap<>();
    /** Broken resources still held; guarded by {@code entries}' lock. */
    private final List<Entry<P>> detached = new ArrayList<>();

    /** A pool on the JVM's clock, closing idle resources on the JVM's closer thread. */
    public static <K, P extends Pooled> SharedPool<K, P> closedWhenIdle() {
        return new SharedPool<>(System::nanoTime,
            (task, delayMs) -> CLOSER.schedule(() -> CLOSING.execute(task), delayMs, TimeUnit.MILLISECONDS));
    }

    /** @param nanoClock a monotonic clock in nanoseconds, as System::nanoTime */
    SharedPool(LongSupplier nanoClock, Scheduler scheduler) {
        this.nanoClock = nanoClock;
        this.scheduler = scheduler;
    }

    /** The resource for {@code key}, made by {@code create} if there is none or it broke; pair with {@link #release}. */
    public P acquire(K key, Supplier<P> create) {
        P resource = counted(key, create);
        try {
            resource.awaitReady();
        } catch (RuntimeException | Error e) {
            // Uncounted, it still closes when idle or broken: a held producer would keep its daemon (and
            // the KPL's once-a-second relaunch of a daemon that cannot be placed) for the JVM's life.
            release(resource);
            throw e;
        }
        return resource;
    }

    /** The resource for {@code key}, its holders counted with the caller. */
    private P counted(K key, Supplier<P> create) {
        Entry<P> entry;
        boolean mine;
        synchronized (entries) {
            entry = entries.get(key);
            P existing = entry == null ? null : entry.resource();
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

    /** Makes the entry's resource, on the caller's thread and outside the lock. */
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
        entry.creation.completeExceptionally(new IllegalStateException("The JVM is exiting: its pooled resources are closed"));
    }

    /** Closes a broken resource now if nobody holds it, else when its last holder releases it. */
    private void detach(Entry<P> entry) {
        if (entry.holders == 0) {
            closeSoon(entry.resource());
        } else {
            detached.add(entry);
        }
    }

    public void release(P resource) {
        synchronized (entries) {
            for (Entry<P> entry : entries.values()) {
                if (entry.resource() == resource && --entry.holders == 0) {
                    entry.idleSinceNanos = nanoClock.getAsLong();
                    scheduler.schedule(this::closeIdle, resource.idleTimeoutMs());
                }
            }
            Iterator<Entry<P>> held = detached.iterator();
            while (held.hasNext()) {
                Entry<P> entry = held.next();
                if (entry.resource() == resource && --entry.holders == 0) {
                    held.remove();
                    closeSoon(resource);
                }
            }
        }
    }

    private void closeSoon(P resource) {
        scheduler.schedule(() -> closeEach(List.of(resource)), 0);
    }

    private void closeIdle() {
        List<P> idle = new ArrayList<>();
        synchronized (entries) {
            Iterator<Entry<P>> all = entries.values().iterator();
            while (all.hasNext()) {
                Entry<P> entry = all.next();
                long idleMs = TimeUnit.NANOSECONDS.toMillis(nanoClock.getAsLong() - entry.idleSinceNanos);
                if (entry.holders == 0 && idleMs >= entry.resource().idleTimeoutMs()) {
                    all.remove();
                    idle.add(entry.resource());
                }
            }
        }
        idle.forEach(this::closeSoon);
    }

    /** Closes every resource, held or not: the JVM is exiting. */
    public void closeAll() {
        List<P> all = new ArrayList<>();
        synchronized (entries) {
            entries.values().stream().map(Entry::resource).filter(Objects::nonNull).forEach(all::add);
            detached.forEach(entry -> all.add(entry.resource()));
            entries.clear();
            detached.clear();
        }
        // All at once, each bounded by its own timeout, and waited for: the JVM exits after this.
        CompletableFuture.allOf(all.stream().map(resource -> CompletableFuture.runAsync(() -> closeEach(List.of(resource)), CLOSING))
            .toArray(CompletableFuture[]::new)).join();
    }

    /** Closes each one even when another fails: a producer skipped here would keep its daemon. */
    private static void closeEach(List<? extends Pooled> resources) {
        for (Pooled resource : resources) {
            try {
                resource.close();
            } catch (RuntimeException | Error e) {
                LOG.error("Closing a pooled {} failed", resource.getClass().getSimpleName(), e);
            }
        }
    }

    /** The resources new users would get, detached ones and those being made excluded. */
    public List<P> current() {
        synchronized (entries) {
            return entries.values().stream().map(Entry::resource).filter(Objects::nonNull).toList();
        }
    }

    /** How many resources are open, detached ones included. */
    int open() {
        synchronized (entries) {
            return current().size() + detached.size();
        }
    }
}
