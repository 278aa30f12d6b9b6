package sparkkpl.producer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.KinesisProducer;
import sparkkpl.config.ProducerConfiguration;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.natives.DaemonFolder;

/** Starts a KPL producer (and so its native daemon) for a write's configuration. */
final class ProducerFactory {
    private static final Logger LOG = LoggerFactory.getLogger(ProducerFactory.class);

    private ProducerFactory() {}

    static SharedProducer create(WriteConfig config) {
        ProducerConfiguration producerConfig = ProducerConfiguration.complete(config);
        Runnable keepDaemonInPlace = producerConfig.placedDaemonDir()
            .<Runnable>map(dir -> () -> ProducerConfiguration.placeDaemon(dir)).orElse(() -> { });
        DaemonFolder folder = DaemonFolder.create(producerConfig.pipesRoot(), producerConfig.pipesSetBy());
        producerConfig.pipesIn(folder.path());
        LOG.info("Starting a KPL producer for {}, its pipes in {}", config, folder.path());
        KinesisProducer kpl;
        KplLogging.forProducer(config.kplLogsVerbosely());
        try {
            kpl = new KinesisProducer(producerConfig.kpl());
        } catch (RuntimeException | Error e) {
            folder.destroy(() -> { }); // a daemon launch may already be under way
            throw e;
        }
        return new SharedProducer(kpl, folder, keepDaemonInPlace, producerConfig.settings(),
            config.getLong(SinkOption.QUEUE_LIMIT), config.getLong(SinkOption.QUEUE_LIMIT_BYTES),
            producerConfig.kpl().getRecordTtl(),
            config.getLong(SinkOption.PRODUCER_IDLE_TIMEOUT_MS),
            config.getLong(SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS));
    }
}
