package sparkkpl.producer;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.function.Supplier;
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
    /**
     * Builds producers off the task threads (the KPL takes an interruptible file lock while it writes its CA
     * certificates), each on its own: a slow start for one endpoint must not hold up the others.
     */
    private static final ExecutorService FACTORY = OffTaskThread.newPool("spark-kpl-producer-factory");
    private static final SharedPool<ProducerSpec, SharedProducer> POOL = SharedPool.closedWhenIdle();
    private static final NewestIncarnations NEWEST = new NewestIncarnations();

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
        return acquire(POOL, spec, () -> created(() -> ProducerFactory.create(spec)), streams);
    }

    /**
     * {@link #acquire(ProducerSpec, Collection)} from any pool of producers (tests give theirs). A stream the
     * task knows by an incarnation older than one the JVM has met is not put to the producer: its write
     * fails at commit anyway, and a producer made since must learn only the later one. That is checked after
     * the acquire, so that a producer made because of a later incarnation never learns the earlier.
     */
    static <K> SharedProducer acquire(SharedPool<K, SharedProducer> pool, K key, Supplier<SharedProducer> create,
                                      Collection<StreamDescription> streams) {
        while (true) {
            SharedProducer producer = pool.acquire(key, create);
            if (streams.stream().allMatch(stream -> NEWEST.overtaken(stream) || producer.admits(stream))) {
                return producer;
            }
            pool.release(producer); // outlived: the pool makes the next one, and closes this one once released
        }
    }

    /** Runs a producer's creation off the task thread. */
    static <T> T created(Callable<T> creation) {
        return OffTaskThread.call(FACTORY, creation);
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
