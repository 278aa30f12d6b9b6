package sparkkpl.producer;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.KinesisProducer;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.config.AwsCredentials;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.natives.DaemonFolder;
import sparkkpl.natives.NativeDaemon;
import sparkkpl.util.OffTaskThread;

/**
 * At most one KPL producer per executor JVM per distinct configuration: each producer is a native
 * daemon with its own threads and connections, so one per task would multiply them (seed 000).
 * Producers are created on first use, counted while tasks hold them, closed after an idle timeout
 * and, with a bounded flush, when the JVM exits. A producer whose KPL gave up is detached (new
 * tasks get a new one) but closed only when its last holder releases it: closing it under them
 * would fail their records still in flight.
 */
public final class ProducerRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerRegistry.class);

    private static final class Entry {
        final SharedProducer producer;
        int holders;
        long idleSinceNanos;

        Entry(SharedProducer producer) {
            this.producer = producer;
        }
    }

    private static final Map<Map<String, String>, Entry> ENTRIES = new HashMap<>();
    /** Broken producers still held by tasks; guarded by ENTRIES' lock. */
    private static final List<Entry> DETACHED = new ArrayList<>();
    /** Builds producers: the KPL takes an interruptible file lock while it writes its CA certificates. */
    private static final ExecutorService FACTORY = OffTaskThread.newWorker("spark-kpl-producer-factory");
    private static final ScheduledExecutorService IDLE_CLOSER =
        Executors.newSingleThreadScheduledExecutor(OffTaskThread.daemonThreads("spark-kpl-idle-closer"));

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ProducerRegistry::closeAll, "spark-kpl-shutdown"));
    }

    private ProducerRegistry() {}

    /** The JVM's producer for this configuration, created if needed; pair with {@link #release}. */
    public static SharedProducer acquire(WriteConfig config) {
        Map<String, String> key = config.producerIdentity();
        SharedProducer producer;
        synchronized (ENTRIES) {
            Entry entry = ENTRIES.get(key);
            if (entry != null && entry.producer.isBroken()) {
                ENTRIES.remove(key);
                detach(entry);
                entry = null;
            }
            if (entry == null) {
                entry = new Entry(OffTaskThread.call(FACTORY, () -> create(config)));
                ENTRIES.put(key, entry);
            }
            entry.holders++;
            producer = entry.producer;
        }
        producer.awaitDaemon();
        return producer;
    }

    /** Closes a broken producer now if no task holds it, else when the last one releases it. */
    private static void detach(Entry entry) {
        if (entry.holders == 0) {
            closeSoon(entry.producer);
        } else {
            DETACHED.add(entry);
        }
    }

    public static void release(SharedProducer producer) {
        synchronized (ENTRIES) {
            for (Entry entry : ENTRIES.values()) {
                if (entry.producer == producer && --entry.holders == 0) {
                    entry.idleSinceNanos = System.nanoTime();
                    IDLE_CLOSER.schedule(ProducerRegistry::closeIdle, producer.idleTimeoutMs(), TimeUnit.MILLISECONDS);
                }
            }
            Iterator<Entry> detached = DETACHED.iterator();
            while (detached.hasNext()) {
                Entry entry = detached.next();
                if (entry.producer == producer && --entry.holders == 0) {
                    detached.remove();
                    closeSoon(producer);
                }
            }
        }
    }

    private static void closeSoon(SharedProducer producer) {
        IDLE_CLOSER.execute(() -> closeEach(List.of(producer)));
    }

    private static SharedProducer create(WriteConfig config) {
        KinesisProducerConfiguration kplConfig = config.producerConfiguration();
        // Placing the daemon ourselves keeps the KPL from extracting it into a folder shared by
        // every user, under a lock that a task interrupt breaks.
        Path dir = config.get(SinkOption.NATIVE_DIR).map(Paths::get).orElseGet(NativeDaemon::defaultDir);
        Runnable keepDaemonInPlace = () -> { };
        if (kplConfig.getNativeExecutable().isEmpty()) {
            kplConfig.setNativeExecutable(NativeDaemon.install(dir).toString());
            keepDaemonInPlace = () -> NativeDaemon.install(dir);
        } else {
            NativeDaemon.checkGivenExecutable(Paths.get(kplConfig.getNativeExecutable()));
        }
        // The daemon's named pipes too, or they land in a folder every user of the host shares.
        String pipesSetBy = SinkOption.CONF_PREFIX + "TempDirectory";
        if (kplConfig.getTempDirectory().isEmpty()) {
            kplConfig.setTempDirectory(dir.toString());
            pipesSetBy = SinkOption.NATIVE_DIR.confKey();
        }
        AwsCredentials.provider(config)
            .ifPresent(provider -> kplConfig.setCredentialsProvider(AwsCredentials.resolvedOnce(provider, config)));
        // Read back before the pipes move into this producer's own folder below TempDirectory.
        Map<String, String> settings = config.producerSettings(kplConfig);
        DaemonFolder folder = DaemonFolder.create(Paths.get(kplConfig.getTempDirectory()), pipesSetBy);
        kplConfig.setTempDirectory(folder.path().toString());
        LOG.info("Starting a KPL producer for {}, its pipes in {}", config, folder.path());
        KinesisProducer kpl;
        KplLogging.forProducer(config.kplLogsVerbosely());
        try {
            kpl = new KinesisProducer(kplConfig);
        } catch (RuntimeException | Error e) {
            folder.destroy(() -> { }); // a daemon launch may already be under way
            throw e;
        }
        return new SharedProducer(kpl, folder, keepDaemonInPlace, settings,
            config.getLong(SinkOption.QUEUE_LIMIT), config.getLong(SinkOption.QUEUE_LIMIT_BYTES),
            config.getLong(SinkOption.PRODUCER_IDLE_TIMEOUT_MS),
            config.getLong(SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS));
    }

    private static void closeIdle() {
        List<SharedProducer> idle = new ArrayList<>();
        synchronized (ENTRIES) {
            Iterator<Entry> entries = ENTRIES.values().iterator();
            while (entries.hasNext()) {
                Entry entry = entries.next();
                long idleMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - entry.idleSinceNanos);
                if (entry.holders == 0 && idleMs >= entry.producer.idleTimeoutMs()) {
                    entries.remove();
                    idle.add(entry.producer);
                }
            }
        }
        closeEach(idle);
    }

    private static void closeAll() {
        List<SharedProducer> all = new ArrayList<>();
        synchronized (ENTRIES) {
            ENTRIES.values().forEach(entry -> all.add(entry.producer));
            DETACHED.forEach(entry -> all.add(entry.producer));
            ENTRIES.clear();
            DETACHED.clear();
        }
        closeEach(all);
    }

    /** Closes each one even when another fails: a producer skipped here would keep its daemon. */
    private static void closeEach(List<SharedProducer> producers) {
        for (SharedProducer producer : producers) {
            try {
                producer.close();
            } catch (RuntimeException | Error e) {
                LOG.error("Closing a KPL producer failed", e);
            }
        }
    }

    /** Live figures of every producer of this JVM (the driver's: its producerStats report). */
    public static List<Map<String, Long>> stats() {
        List<Map<String, Long>> stats = new ArrayList<>();
        synchronized (ENTRIES) {
            ENTRIES.values().forEach(entry -> stats.add(entry.producer.stats()));
        }
        return stats;
    }

    /** What every producer of this JVM runs with, by config key, secrets masked. */
    public static List<Map<String, String>> settings() {
        List<Map<String, String>> settings = new ArrayList<>();
        synchronized (ENTRIES) {
            ENTRIES.values().forEach(entry -> settings.add(entry.producer.settings()));
        }
        return settings;
    }

    /** How many producers (daemons) this JVM has open, detached ones included. */
    public static int openProducers() {
        synchronized (ENTRIES) {
            return ENTRIES.size() + DETACHED.size();
        }
    }
}
