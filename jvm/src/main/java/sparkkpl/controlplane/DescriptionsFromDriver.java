package sparkkpl.controlplane;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.StreamDescription;

/**
 * An executor's way to the driver's {@link SharedDescriptions}, open while the sink's plugin runs in
 * its JVM ({@code spark.plugins=sparkkpl.spark.KplPlugin}); without it each JVM describes the streams
 * rows name itself, as before.
 */
public final class DescriptionsFromDriver {
    private static final Logger LOG = LoggerFactory.getLogger(DescriptionsFromDriver.class);
    /** Between two asks while the driver's call is under way: the first soon, as most calls take milliseconds. */
    private static final long FIRST_PAUSE_MS = 5;
    private static final long LONGEST_PAUSE_MS = 200;
    /**
     * How long an executor waits for the driver's answer: longer than the driver's call with its retries
     * (KinesisTransport gives up within a minute) and a queue of other streams' calls before it.
     */
    static final long ANSWER_TIMEOUT_MS = TimeUnit.MINUTES.toMillis(3);

    /** The plugin's message to the driver: Spark's {@code PluginContext.ask}. */
    public interface Channel {
        Object ask(Object message) throws Exception;
    }

    private static volatile Channel channel;
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private DescriptionsFromDriver() {}

    /** The sink's plugin started in this JVM. */
    public static void open(Channel toDriver) {
        channel = toDriver;
    }

    /** The plugin stopped. */
    public static void close() {
        channel = null;
    }

    /**
     * The streams rows name described by the driver while the plugin runs here, else by {@code local},
     * for the producer of {@code spec}.
     */
    public static ShardMaps.Describer describer(ProducerSpec spec, ShardMaps.Lister local) {
        return (stream, lookId) -> {
            Channel toDriver = channel;
            if (toDriver != null) {
                try {
                    return asked(toDriver, new SharedDescriptions.Ask(spec, stream, lookId), System::currentTimeMillis);
                } catch (Unreachable e) {
                    if (WARNED.compareAndSet(false, true)) {
                        LOG.warn("The driver did not answer for stream '{}' ({}): this JVM describes the streams rows "
                            + "name itself", stream, e.getMessage());
                    }
                }
            }
            return local.describe(stream);
        };
    }

    /** The driver could not be asked: Spark's message failed. */
    static final class Unreachable extends Exception {
        Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The driver's description, asking again while its call is under way. */
    static StreamDescription asked(Channel toDriver, SharedDescriptions.Ask ask, LongSupplier clockMs)
            throws IOException, Unreachable {
        long deadline = clockMs.getAsLong() + ANSWER_TIMEOUT_MS;
        long pauseMs = FIRST_PAUSE_MS;
        while (true) {
            SharedDescriptions.Answer answer;
            try {
                answer = SharedDescriptions.decoded(toDriver.ask(SharedDescriptions.encoded(ask)),
                    SharedDescriptions.Answer.class);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while asking the driver to describe stream '" + ask.stream() + "'", e);
            } catch (Exception e) {
                throw new Unreachable(e.toString(), e);
            }
            if (answer instanceof SharedDescriptions.Described described) {
                return described.description();
            }
            if (answer instanceof SharedDescriptions.Failed failed) {
                throw new IOException("the driver could not describe stream '" + ask.stream() + "': " + failed.message());
            }
            if (clockMs.getAsLong() >= deadline) {
                throw new IOException("the driver did not describe stream '" + ask.stream() + "' within "
                    + ANSWER_TIMEOUT_MS / 1000 + " s");
            }
            pause(pauseMs, ask.stream());
            pauseMs = Math.min(2 * pauseMs, LONGEST_PAUSE_MS);
        }
    }

    private static void pause(long ms, String stream) throws IOException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the driver to describe stream '" + stream + "'", e);
        }
    }
}
