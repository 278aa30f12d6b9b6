package sparkkpl.producer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.KinesisProducer;
import sparkkpl.config.ProducerSpec;
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
        KinesisProducer kpl;
        KplLogging.forProducer(spec.kplLogsVerbosely());
        try {
            kpl = new KinesisProducer(producerConfig.kpl());
        } catch (RuntimeException | Error e) {
            folder.destroy(() -> { }); // a daemon launch may already be under way
            throw e;
        }
        return new SharedProducer(kpl, folder, keepDaemonInPlace, producerConfig.settings(),
            spec.queueLimit(), spec.queueLimitBytes(), producerConfig.kpl().getRecordTtl(), spec.idleTimeoutMs(),
            spec.shutdownFlushTimeoutMs());
    }
}
