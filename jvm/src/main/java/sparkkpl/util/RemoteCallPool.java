package sparkkpl.util;

import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The JVM's one pool for blocking calls to a remote service made off their caller's thread: the driver's
 * checks of a write's streams side by side ({@link ParallelCalls}), and the descriptions it makes for the
 * executors that ask through the sink's plugin (a thread that must never wait for Kinesis). At most
 * {@link #THREADS} calls run at once; more wait in its queue, never on the thread that submitted them.
 * Idle threads end after a minute, so a JVM that makes no such calls keeps none.
 */
public final class RemoteCallPool {
    /** Calls at once, every caller of the JVM together. */
    static final int THREADS = 16;
    /** The threads' name, then numbered. */
    static final String THREAD_NAME = "spark-kpl-remote-calls";

    private static final ThreadPoolExecutor POOL = idleEnding();

    private RemoteCallPool() {}

    /** Runs {@code call} on a thread of the pool, once one is free. */
    public static Future<?> submit(Runnable call) {
        return POOL.submit(call);
    }

    /** Takes a call of {@link #submit} out of the queue: true when it had not started, and will not. */
    public static boolean withdraw(Future<?> call) {
        return POOL.remove((Runnable) call); // submit queues the future itself
    }

    /** As {@link #submit}, for a caller that has no use for the future. */
    public static void execute(Runnable call) {
        POOL.execute(call);
    }

    private static ThreadPoolExecutor idleEnding() {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(THREADS, THREADS, 1, TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(), OffTaskThread.daemonThreads(THREAD_NAME));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
