package sparkkpl.producer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.KinesisProducer;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.config.ProducerSpec;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.controlplane.StreamApi;
import sparkkpl.natives.DaemonFolder;

/** Starts a KPL producer (and so its native daemon) from its spec. */
final class ProducerFactory {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerFactory.class);

    private ProducerFactory() {}

    static SharedProducer create(ProducerSpec spec) {
        ProducerConfiguration producerConfig = ProducerConfiguration.complete(spec);
        Runnable keepDaemonInPlace = producerConfig.placedDaemonDir()
            .<Runnable>map(dir -> () -> ProducerConfiguration.placeDaemon(dir)).orElse(() -> { });
        DaemonFolder folder = DaemonFolder.create(producerConfig.pipesRoot(), producerConfig.pipesSetBy());
        producerConfig.pipesIn(folder.path());
        LOG.info("Starting a KPL producer for {}, its pipes in {}", spec, folder.path());
        KinesisProducerConfiguration completed = producerConfig.kpl();
        // Its shard maps list the streams as its daemon reaches them: same endpoint, region and credentials.
        ShardMaps shardMaps = new ShardMaps(
            new StreamApi(completed, completed.getRegion(), completed.getCredentialsProvider()), System::nanoTime);
        KinesisProducer kpl;
        KplLogging.forProducer(spec.kplLogsVerbosely());
        try {
            kpl = new KinesisProducer(completed);
        } catch (RuntimeException | Error e) {
            folder.destroy(() -> { }); // a daemon launch may already be under way
            shardMaps.close();
            throw e;
        }
        return new SharedProducer(kpl, folder, keepDaemonInPlace, producerConfig.settings(), shardMaps,
            completed.isAggregationEnabled(), spec.queueLimit(), spec.queueLimitBytes(), completed.getRecordTtl(), spec.producerIdleTimeoutMs(),
            spec.shutdownFlushTimeoutMs());
    }
}
