package sparkkpl.metrics;

import static org.junit.Assert.assertEquals;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import java.util.Map;
import org.junit.Test;

/** The figures a streaming query's progress reports carry, and the executor's metrics source. */
public class SinkMetricsTest {
    @Test
    public void aProgressReportCarriesTheBatchesCommittedSinceTheLastOneAndThenZeros() {
        ProgressFigures progress = new ProgressFigures();
        progress.committed(WriteSummary.ofReplayedRows(4));
        progress.committed(WriteSummary.ofReplayedRows(3));

        Map<String, String> report = progress.takeForReport();
        assertEquals("7", report.get("records_replayed"));
        assertEquals("2", report.get("tasks"));
        assertEquals(WriteMetric.values().length, report.size());
        assertEquals("0", progress.takeForReport().get("records_replayed"));
    }

    @Test
    public void theExecutorSourceReadsTheJvmsProducersAndItsEndedTasks() {
        MetricRegistry registry = new MetricRegistry();
        KplMetricsPlugin.register(registry);
        long before = ExecutorTotals.total().get(WriteMetric.RECORDS_REPLAYED);

        ExecutorTotals.taskEnded(WriteSummary.ofReplayedRows(5));

        assertEquals(before + 5, gauge(registry, "tasks.records_replayed"));
        assertEquals(0L, gauge(registry, "producer.outstandingRecords"));
        assertEquals(1 + KplMetricsPlugin.PRODUCER_SUMS.size() + KplMetricsPlugin.PRODUCER_PEAKS.size()
            + WriteMetric.values().length, registry.getGauges().size());
    }

    private static Object gauge(MetricRegistry registry, String name) {
        Gauge<?> gauge = registry.getGauges().get(name);
        return gauge.getValue();
    }
}
