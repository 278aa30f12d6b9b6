package sparkkpl.spark;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.spark.SparkContext;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.controlplane.DescriptionsFromDriver;
import sparkkpl.controlplane.SharedDescriptions;

/**
 * The sink's plugin ({@code spark.plugins=sparkkpl.spark.KplPlugin}; {@code spark_kpl.configure} adds
 * it): executors ask the driver for the descriptions of the streams rows name, which the driver makes
 * once per stream and look for all of them ({@link SharedDescriptions}), so that the control-plane
 * calls of a write do not grow with its executors. Without it every executor JVM describes each
 * stream its rows name.
 */
public final class KplPlugin implements SparkPlugin {
    /** Whether the plugin's driver half runs in this JVM. */
    private static volatile boolean onDriver;
    private static final AtomicBoolean ADVISED = new AtomicBoolean();
    private static final Logger LOG = LoggerFactory.getLogger(KplPlugin.class);

    @Override
    public DriverPlugin driverPlugin() {
        return new DriverPlugin() {
            @Override
            public Map<String, String> init(SparkContext sc, PluginContext context) {
                onDriver = true;
                return Map.of();
            }

            @Override
            public Object receive(Object message) {
                SharedDescriptions.Ask ask = SharedDescriptions.decoded(message, SharedDescriptions.Ask.class);
                return SharedDescriptions.encoded(SharedDescriptions.DRIVER.answer(ask));
            }

            @Override
            public void shutdown() {
                onDriver = false;
            }
        };
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            @Override
            public void init(PluginContext context, Map<String, String> extraConf) {
                DescriptionsFromDriver.open(context::ask);
            }

            @Override
            public void shutdown() {
                DescriptionsFromDriver.close();
            }
        };
    }

    /**
     * Warns once per driver when rows name streams and the plugin does not run: each executor then
     * describes each stream its rows name, E x K calls against Kinesis's 20 a second per account.
     */
    static void adviseWhereMissing(WritePlan plan) {
        if (plan.layout().namesStreams() && !onDriver && !ADVISED.getAndSet(true)) {
            LOG.warn("Rows name their streams, and the sink's plugin is not on spark.plugins: every executor describes "
                + "each stream its rows name (DescribeStreamSummary, 20 calls a second per account). Set spark.plugins="
                + "{} (spark_kpl.configure does) so that the driver describes each once: docs/scaling.md",
                KplPlugin.class.getName());
        }
    }
}
