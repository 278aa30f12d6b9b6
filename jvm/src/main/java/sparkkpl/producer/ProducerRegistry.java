package sparkkpl.producer;

import java.io.IOException;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.controlplane.StreamApi;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.util.OffTaskThread;

/**
 * The JVM's home for what outlives a task: at most one KPL producer per distinct spec (each is a
 * native daemon with its own threads and connections, so one per task would multiply them), with
 * the shard maps and lister it owns; and the driver's Kinesis clients, one per spec. Each pool
 * closes what stayed unused for its spec's idle timeout and, the producers with a bounded flush,
 * everything when the JVM exits.
 */
public final class ProducerRegistry {
    /** Builds producers: the KPL takes an interruptible file lock while it writes its CA certificates. */
    private static final ExecutorService FACTORY = OffTaskThread.newWorker("spark-kpl-producer-factory");
    private static final ScheduledExecutorService CLOSER =
        Executors.newSingleThreadScheduledExecutor(OffTaskThread.daemonThreads("spark-kpl-idle-closer"));
    private static final ProducerPool.Scheduler CLOSING =
        (task, delayMs) -> CLOSER.schedule(task, delayMs, TimeUnit.MILLISECONDS);
    private static final ProducerPool<ProducerSpec, SharedProducer> POOL = new ProducerPool<>(System::nanoTime, CLOSING);
    private static final ProducerPool<ProducerSpec, DriverClient> DRIVER_CLIENTS =
        new ProducerPool<>(System::nanoTime, CLOSING);

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            POOL.closeAll();
            DRIVER_CLIENTS.closeAll();
        }, "spark-kpl-shutdown"));
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

    /** A call the driver makes to Kinesis itself. */
    public interface StreamCall<T> {
        T call(StreamApi api) throws IOException;
    }

    /**
     * Makes {@code call} with the JVM's client for this spec, opened if needed and kept for the spec's
     * idle timeout after its last use: a streaming query's driver calls at every micro-batch.
     *
     * @throws Credentials.Unavailable when the spec's credentials give none
     */
    public static <T> T withStreamApi(ProducerSpec spec, StreamCall<T> call) throws IOException {
        DriverClient client = DRIVER_CLIENTS.acquire(spec, () -> new DriverClient(StreamApi.open(spec), spec));
        try {
            return call.call(client.api);
        } finally {
            DRIVER_CLIENTS.release(client);
        }
    }

    /** A driver's client as its pool keeps it. */
    private record DriverClient(StreamApi api, ProducerSpec spec) implements ProducerPool.Pooled {
        @Override
        public boolean isBroken() {
            return false;
        }

        @Override
        public void awaitReady() {
        }

        @Override
        public long idleTimeoutMs() {
            return spec.producerIdleTimeoutMs();
        }

        @Override
        public void close() {
            api.close();
        }
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
