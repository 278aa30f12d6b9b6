package sparkkpl.producer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.KinesisProducer;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.config.ProducerSpec;
import sparkkpl.controlplane.DescriptionsFromDriver;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.controlplane.StreamApi;
import sparkkpl.natives.DaemonFolder;

/** Starts a KPL producer (and so its native daemon) from its spec. */
final class ProducerFactory {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerFactory.class);

    /** Held while the KPL writes its CA certificates, under a file lock that one JVM may take only once at a time. */
    private static final Object KPL_START = new Object();

    private ProducerFactory() {}

    /**
     * The KPL's constructor, one at a time in this JVM: it locks {@code cacerts.lock} beside the daemon's
     * binary with {@code FileChannel.lock}, which throws in a second thread of the JVM that holds it.
     * It only launches the daemon, so the wait is short; everything slow before it runs in parallel.
     */
    private static KinesisProducer started(KinesisProducerConfiguration completed) {
        synchronized (KPL_START) {
            return new KinesisProducer(completed);
        }
    }

    static SharedProducer create(ProducerSpec spec) {
        ProducerConfiguration producerConfig = ProducerConfiguration.complete(spec);
        Runnable keepDaemonInPlace = producerConfig.placedDaemonDir()
            .<Runnable>map(dir -> () -> ProducerConfiguration.placeDaemon(dir)).orElse(() -> { });
        DaemonFolder folder = DaemonFolder.create(producerConfig.pipesRoot(), producerConfig.pipesSetBy());
        producerConfig.pipesIn(folder.path());
        LOG.info("Starting a KPL producer for {}, its pipes in {}", spec, folder.path());
        KinesisProducerConfiguration completed = producerConfig.kpl();
        // Its shard maps list the streams as its daemon reaches them: same endpoint, region and credentials;
        // the driver describes the streams rows name where the sink's plugin runs.
        StreamApi api = new StreamApi(completed, completed.getRegion(), completed.getCredentialsProvider(),
            spec.streamArn());
        ShardMaps shardMaps = new ShardMaps(api, DescriptionsFromDriver.describer(spec, api), System::nanoTime);
        KinesisProducer kpl;
        KplLogging.forProducer(spec.kplLogsVerbosely());
        try {
            kpl = started(completed);
        } catch (RuntimeException | Error e) {
            folder.destroy(() -> { }); // a daemon launch may already be under way
            shardMaps.close();
            throw e;
        }
        return new SharedProducer(
            new SharedProducer.Daemon(kpl, folder, keepDaemonInPlace, shardMaps, completed.isAggregationEnabled(),
                producerConfig.settings()),
            new SharedProducer.Limits(spec.queueLimit(), spec.queueLimitBytes(), completed.getRecordTtl(),
                spec.producerIdleTimeoutMs(), spec.shutdownFlushTimeoutMs()));
    }
}
