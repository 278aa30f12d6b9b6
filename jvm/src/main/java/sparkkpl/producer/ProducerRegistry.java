package sparkkpl.producer;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import sparkkpl.config.ProducerSpec;
import sparkkpl.util.OffTaskThread;

/**
 * At most one KPL producer per executor JVM per distinct configuration: each producer is a native
 * daemon with its own threads and connections, so one per task would multiply them. The JVM's
 * {@link ProducerPool} closes idle producers and, with a bounded flush, every producer when the
 * JVM exits.
 */
public final class ProducerRegistry {
    /** Builds producers: the KPL takes an interruptible file lock while it writes its CA certificates. */
    private static final ExecutorService FACTORY = OffTaskThread.newWorker("spark-kpl-producer-factory");
    private static final ScheduledExecutorService CLOSER =
        Executors.newSingleThreadScheduledExecutor(OffTaskThread.daemonThreads("spark-kpl-idle-closer"));
    private static final ProducerPool<ProducerSpec, SharedProducer> POOL = new ProducerPool<>(
        System::nanoTime, (task, delayMs) -> CLOSER.schedule(task, delayMs, TimeUnit.MILLISECONDS));

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(POOL::closeAll, "spark-kpl-shutdown"));
    }

    private ProducerRegistry() {}

    /** The JVM's producer for this spec, created if needed; pair with {@link #release}. */
    public static SharedProducer acquire(ProducerSpec spec) {
        return POOL.acquire(spec, () -> OffTaskThread.call(FACTORY, () -> ProducerFactory.create(spec)));
    }

    public static void release(SharedProducer producer) {
        POOL.release(producer);
    }

    /** Live figures of every producer of this JVM (the driver's: its producerStats report). */
    public static List<Map<String, Long>> stats() {
        return POOL.current().stream().map(SharedProducer::stats).toList();
    }

    /** What every producer of this JVM runs with, by config key, secrets masked. */
    public static List<Map<String, String>> settings() {
        return POOL.current().stream().map(SharedProducer::settings).toList();
    }
}
