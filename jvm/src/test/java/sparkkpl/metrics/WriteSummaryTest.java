package sparkkpl.metrics;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.junit.Test;

/** A write's figures: per task, added up, and as the Spark UI shows them. */
public class WriteSummaryTest {
    private static final WriteSummary REPLAYED_5 = WriteSummary.ofReplayedRows(5);
    private static final WriteSummary REPLAYED_2 = WriteSummary.ofReplayedRows(2);

    @Test
    public void countsAddUpAcrossTasks() {
        WriteSummary total = WriteSummary.sum(new WriterCommitMessage[] {REPLAYED_5, REPLAYED_2});

        assertEquals(7, total.get(WriteMetric.RECORDS_REPLAYED));
        assertEquals(2, total.get(WriteMetric.TASKS));
        assertEquals(0, total.get(WriteMetric.RECORDS_WRITTEN));
        assertEquals(0, WriteSummary.sum(new WriterCommitMessage[0]).get(WriteMetric.TASKS));
    }

    @Test
    public void countsAddAndPeaksTakeTheHighest() {
        assertEquals(7, WriteMetric.RECORDS_WRITTEN.combine(3, 4));
        assertEquals(4, WriteMetric.PEAK_OUTSTANDING_BYTES.combine(3, 4));
        assertEquals(4, WriteMetric.PEAK_OUTSTANDING_RECORDS.combine(4, 3));
    }

    @Test
    public void everyMetricIsNamedAsThePythonResultNamesIt() {
        List<String> keys = List.copyOf(REPLAYED_5.toMap().keySet());

        assertEquals(WriteMetric.values().length, keys.size());
        assertEquals("records_written", keys.get(0));
        assertEquals(5L, (long) REPLAYED_5.toMap().get("records_replayed"));
        CustomTaskMetric[] taskMetrics = REPLAYED_5.taskMetrics();
        assertEquals("records_replayed", taskMetrics[WriteMetric.RECORDS_REPLAYED.ordinal()].name());
        assertEquals(5, taskMetrics[WriteMetric.RECORDS_REPLAYED.ordinal()].value());
    }

    @Test
    public void theSparkUiHasOneMetricPerFigureEachMadeFromItsClassName() throws Exception {
        CustomMetric[] metrics = SparkUiMetrics.all();

        assertEquals(Arrays.stream(WriteMetric.values()).map(WriteMetric::key).toList(),
            Arrays.stream(metrics).map(CustomMetric::name).toList());
        for (CustomMetric metric : metrics) {
            CustomMetric remade = (CustomMetric) metric.getClass().getConstructor().newInstance();
            assertEquals(metric.name(), remade.name());
        }
    }

    @Test
    public void theSparkUiAddsCountsAndTakesThePeakOfTasks() {
        CustomMetric[] metrics = SparkUiMetrics.all();

        assertEquals("9", metrics[WriteMetric.RECORDS_WRITTEN.ordinal()].aggregateTaskMetrics(new long[] {4, 5}));
        assertEquals("5", metrics[WriteMetric.PEAK_OUTSTANDING_BYTES.ordinal()].aggregateTaskMetrics(new long[] {4, 5}));
    }

    @Test
    public void aCommittedResultIsTakenOnce() {
        WriteResults.publish("w-1", REPLAYED_5);

        assertEquals(5, WriteResults.take("w-1").get(WriteMetric.RECORDS_REPLAYED));
        assertEquals("The kpl write w-1 finished without committing a result (or its result was dropped, 1000 later "
            + "ones waiting to be read)",
            org.junit.Assert.assertThrows(IllegalStateException.class, () -> WriteResults.take("w-1")).getMessage());
    }

    @Test
    public void resultsNeverTakenAreDroppedOldestFirstPastTheBound() {
        WriteResults.publish("never-read", REPLAYED_5);
        for (int write = 0; write < WriteResults.MAX_UNREAD; write++) {
            WriteResults.publish("later-" + write, WriteSummary.ofReplayedRows(write));
        }

        org.junit.Assert.assertThrows(IllegalStateException.class, () -> WriteResults.take("never-read"));
        for (int write = 0; write < WriteResults.MAX_UNREAD; write++) {
            assertEquals(write, WriteResults.take("later-" + write).get(WriteMetric.RECORDS_REPLAYED));
        }
    }
}
