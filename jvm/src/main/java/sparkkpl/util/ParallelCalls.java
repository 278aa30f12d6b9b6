package sparkkpl.util;

import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * One caller's independent blocking calls (the driver's checks of K streams, a round trip each) run
 * side by side, so that they take about one round trip rather than K. The JVM's callers share the
 * {@link RemoteCallPool}; each caller takes at most {@link #PER_CALLER} of its threads, and makes calls
 * on its own thread too, taking the next call itself rather than waiting for a thread: a caller never
 * queues behind another one's slow calls (a throttled stream of another query).
 */
public final class ParallelCalls {
    /** The pool's threads one caller takes at most, its own thread besides. */
    static final int PER_CALLER = 7;

    private ParallelCalls() {}

    /**
     * What {@code call} returns for each item, in the items' order, once every call returned.
     *
     * @throws RuntimeException the first a call threw (no call starts after it)
     * @throws UncheckedIOException of an {@link InterruptedIOException} when the caller is interrupted
     *     while others' threads make its calls: those are interrupted too, and not waited for
     */
    public static <T, R> List<R> each(List<T> items, Function<? super T, ? extends R> call) {
        Object[] results = new Object[items.size()];
        AtomicInteger next = new AtomicInteger();
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < items.size(); i = next.getAndIncrement()) {
                try {
                    results[i] = call.apply(items.get(i));
                } catch (RuntimeException | Error e) {
                    next.set(items.size());
                    throw e;
                }
            }
        };
        List<Future<?>> helpers = new ArrayList<>();
        for (int helper = 0; helper < Math.min(PER_CALLER, items.size() - 1); helper++) {
            helpers.add(RemoteCallPool.submit(worker));
        }
        RuntimeException failed = null;
        try {
            worker.run();
        } catch (RuntimeException e) {
            failed = e;
        }
        for (Future<?> helper : helpers) {
            RuntimeException helperFailed = failure(helper, helpers);
            failed = failed == null ? helperFailed : failed;
        }
        if (failed != null) {
            throw failed;
        }
        @SuppressWarnings("unchecked")
        List<R> answers = (List<R>) Arrays.asList(results);
        return answers;
    }

    /**
     * Waits for one helper that started (one still queued is dropped: the caller made its calls): what it
     * threw, or null. The array's writes are visible once its future is done.
     */
    private static RuntimeException failure(Future<?> helper, List<Future<?>> helpers) {
        if (RemoteCallPool.withdraw(helper)) {
            return null;
        }
        try {
            helper.get();
            return null;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            return (RuntimeException) e.getCause();
        } catch (InterruptedException e) {
            helpers.forEach(each -> each.cancel(true));
            throw interrupted();
        }
    }

    /**
     * What {@code call}, made by another thread, returned or threw (an Error or RuntimeException as it
     * was, a checked exception wrapped); waiting may be interrupted, as a call made here could be.
     *
     * @throws UncheckedIOException of an {@link InterruptedIOException} when the caller is interrupted
     *     (how Spark knows a stopped query's thread)
     */
    public static <T> T awaited(Future<T> call) {
        try {
            return call.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            throw interrupted();
        }
    }

    /** The flag restored, what an interrupted wait throws. */
    private static UncheckedIOException interrupted() {
        Thread.currentThread().interrupt();
        return new UncheckedIOException(new InterruptedIOException("Interrupted while waiting for calls made off this thread"));
    }
}
