package sparkkpl.util;

import com.google.common.util.concurrent.Uninterruptibles;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs work that must not be broken by an interrupt on a thread of its own. Spark interrupts task
 * threads when it cancels them, and an interrupt closes any {@code FileChannel} the thread is
 * using: the KPL's file locks among them.
 */
public final class OffTaskThread {
    private OffTaskThread() {}

    /** A single daemon thread, so that work submitted to it never overlaps within this JVM. */
    public static ExecutorService newWorker(String name) {
        return Executors.newSingleThreadExecutor(daemonThreads(name));
    }

    /** Daemon threads made as needed and kept a minute when idle, for work that may overlap. */
    public static ExecutorService newPool(String name) {
        return Executors.newCachedThreadPool(daemonThreads(name));
    }

    /** Daemon threads (they never hold the JVM up) named {@code name}, then {@code name-2}, {@code name-3} ... */
    public static ThreadFactory daemonThreads(String name) {
        AtomicLong made = new AtomicLong();
        return task -> {
            long number = made.incrementAndGet();
            Thread thread = new Thread(task, number == 1 ? name : name + "-" + number);
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Runs {@code work} on {@code worker} and waits out interrupts, restoring the flag afterwards. */
    public static <T> T call(ExecutorService worker, Callable<T> work) {
        return awaitUninterruptibly(worker.submit(work));
    }

    /**
     * The result of {@code work}, waiting out interrupts (the flag restored afterwards); what it threw is
     * thrown as it was (a checked exception wrapped).
     */
    public static <T> T awaitUninterruptibly(Future<T> work) {
        try {
            return Uninterruptibles.getUninterruptibly(work);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        }
    }
}
