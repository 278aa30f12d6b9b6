package sparkkpl.producer;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.util.OffTaskThread;
import sparkkpl.util.SharedPool;

/**
 * The JVM's home for what outlives a task: at most one KPL producer per distinct spec (each is a
 * native daemon with its own threads and connections, so one per task would multiply them), with
 * the shard maps and lister it owns. Its pool closes what stayed unused for its spec's idle timeout
 * and, with a bounded flush, everything when the JVM exits.
 */
public final class ProducerRegistry {
    /** Builds producers: the KPL takes an interruptible file lock while it writes its CA certificates. */
    private static final ExecutorService FACTORY = OffTaskThread.newWorker("spark-kpl-producer-factory");
    private static final SharedPool<ProducerSpec, SharedProducer> POOL = SharedPool.closedWhenIdle();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(POOL::closeAll, "spark-kpl-shutdown"));
    }

    private ProducerRegistry() {}

    /** The JVM's producer for this spec, created if needed; pair with {@link #release}. */
    public static SharedProducer acquire(ProducerSpec spec) {
        return acquire(spec, List.of());
    }

    /**
     * The JVM's producer for this spec, created if needed, whose daemon may send to these streams
     * ({@link SharedProducer#admits}: none of them was created again since it met them); pair with
     * {@link #release}.
     */
    public static SharedProducer acquire(ProducerSpec spec, Collection<StreamDescription> streams) {
        while (true) {
            SharedProducer producer = POOL.acquire(spec, () -> OffTaskThread.call(FACTORY, () -> ProducerFactory.create(spec)));
            if (streams.stream().allMatch(producer::admits)) {
                return producer;
            }
            POOL.release(producer); // outlived: the pool makes the next one, and closes this one once released
        }
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
