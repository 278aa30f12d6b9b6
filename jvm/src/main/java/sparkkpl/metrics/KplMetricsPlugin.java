package sparkkpl.metrics;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.List;
import java.util.Map;
import java.util.function.LongBinaryOperator;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import sparkkpl.producer.ProducerRegistry;

/**
 * The sink's figures per executor in Spark's metrics system, so in every metrics sink a job already
 * has (Prometheus, JMX, Graphite, CSV ...): enabled with {@code spark.plugins=sparkkpl.metrics.KplMetricsPlugin}.
 * A plugin is Spark's public way (since 3.0) for a library to add metrics; a metrics-system
 * {@code Source} registered by hand would need Spark's private classes. Spark names each metric
 * {@code <app>.<executor>.plugin.sparkkpl.metrics.KplMetricsPlugin.<name>}. In local mode the one
 * executor is the driver's JVM, and reports as {@code driver}.
 *
 * <p>{@code producer.*} are read live from the JVM's producers ({@code SharedProducer.stats()}): added
 * up over them, peaks the highest. {@code tasks.*} are the figures of the JVM's ended tasks
 * ({@link ExecutorTotals}), by {@link WriteMetric#key()}.
 */
public final class KplMetricsPlugin implements SparkPlugin {
    /** Figures of {@code SharedProducer.stats()} that add up over the JVM's producers. */
    static final List<String> PRODUCER_SUMS =
        List.of("outstandingRecords", "outstandingBytes", "budgetRecords", "budgetBytes", "budgetLanes",
            "kplOutstandingRecords");
    /** Figures of {@code SharedProducer.stats()} of which the highest is the JVM's. */
    static final List<String> PRODUCER_PEAKS = List.of("peakOutstandingRecords", "peakOutstandingBytes");

    /** None: the driver's own producers (local mode) are its executor's. */
    @Override
    public DriverPlugin driverPlugin() {
        return null;
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new ExecutorPlugin() {
            @Override
            public void init(PluginContext context, Map<String, String> extraConf) {
                register(context.metricRegistry());
            }
        };
    }

    static void register(MetricRegistry registry) {
        registry.register("producers", (Gauge<Integer>) () -> ProducerRegistry.stats().size());
        PRODUCER_SUMS.forEach(key -> registry.register("producer." + key, producerFigure(key, Long::sum)));
        PRODUCER_PEAKS.forEach(key -> registry.register("producer." + key, producerFigure(key, Math::max)));
        for (WriteMetric metric : WriteMetric.values()) {
            registry.register("tasks." + metric.key(), (Gauge<Long>) () -> ExecutorTotals.total().get(metric));
        }
    }

    private static Gauge<Long> producerFigure(String key, LongBinaryOperator combine) {
        return () -> ProducerRegistry.stats().stream().mapToLong(stats -> stats.get(key)).reduce(0, combine);
    }
}
