package sparkkpl.spark;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Experimental: warms the sink's row path up in each executor JVM as it starts, so that a fresh JVM's
 * first write runs more of it compiled (issue #51). Enabled with
 * {@code spark.plugins=sparkkpl.spark.WarmUpPlugin}; in local mode the one executor is the driver's JVM.
 * At the executor's start it runs {@link RowPathWarmUp} once, on one daemon thread of low priority
 * ({@value #THREAD}), which ends when the rows are through: no network, no producer, nothing kept. It never
 * fails the executor: whatever goes wrong stops the warm-up alone, logged at debug.
 */
public final class WarmUpPlugin implements SparkPlugin {
    static final String THREAD = "spark-kpl-warm-up";
    private static final Logger LOG = LoggerFactory.getLogger(WarmUpPlugin.class);
    private static final AtomicLong ROWS_WARMED_UP = new AtomicLong();

    /** None: the warm-up is the executors' (in local mode, the driver JVM's one executor). */
    @Override
    public DriverPlugin driverPlugin() {
        return null;
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            @Override
            public void init(PluginContext context, Map<String, String> extraConf) {
                try {
                    start(new RowPathWarmUp(RowPathWarmUp.ROWS));
                } catch (RuntimeException | OutOfMemoryError e) { // no thread to be had: the executor starts without
                    LOG.debug("The row path's warm-up did not start", e);
                }
            }
        };
    }

    /** The rows this JVM's warm-ups ran through to their end: whether one ran, seen through py4j. */
    public static long rowsWarmedUp() {
        return ROWS_WARMED_UP.get();
    }

    /** Starts the warm-up on its thread, and returns the thread. */
    static Thread start(RowPathWarmUp warmUp) {
        Thread thread = new Thread(() -> {
            long started = System.nanoTime();
            warmUp.run();
            ROWS_WARMED_UP.addAndGet(warmUp.rowsThrough());
            LOG.info("Warmed the row path up: {} rows in {} ms, {} aggregates built and dropped", warmUp.rowsThrough(),
                (System.nanoTime() - started) / 1_000_000, warmUp.sealed());
        }, THREAD);
        thread.setDaemon(true);
        // Linux ignores Java priorities by default (ThreadPriorityPolicy): a hint where a platform honours it.
        thread.setPriority(Thread.MIN_PRIORITY);
        // Spark's handler would end the executor for an uncaught error: the warm-up's stops only itself.
        thread.setUncaughtExceptionHandler((t, e) -> LOG.debug("The row path's warm-up stopped", e));
        thread.start();
        return thread;
    }
}
