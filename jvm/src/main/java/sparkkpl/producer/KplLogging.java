package sparkkpl.producer;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import software.amazon.kinesis.producer.KinesisProducer;

/**
 * Keeps a normal write quiet: the KPL warns on every producer start that it runs a "non-default
 * native binary" (the sink always places its own, on purpose), and its daemon logs per-request
 * warnings nobody can act on. Unless the write sets the KPL's {@code LogLevel}, the daemon logs
 * errors only ({@code KplDefaults}) and the KPL's Java logger is held at ERROR.
 * Setting {@code LogLevel} (info, debug) is the troubleshooting switch: both speak again.
 */
final class KplLogging {
    private static final String KPL_LOGGER = KinesisProducer.class.getName();

    private KplLogging() {}

    /** Called before each producer starts, which is when the KPL logs its start-up warning. */
    static void forProducer(boolean verbose) {
        try {
            // null: the logger inherits its level again, as Spark's (or the user's) log4j2 set it.
            Configurator.setLevel(KPL_LOGGER, verbose ? null : Level.ERROR);
        } catch (LinkageError e) {
            // No log4j2 core on this classpath (not Spark's own logging): nothing here to quiet.
        }
    }
}
