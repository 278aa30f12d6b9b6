package sparkkpl.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;

import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.Test;
import sparkkpl.metrics.WriteMetric;
import sparkkpl.metrics.WriteResults;
import sparkkpl.metrics.WriteSummary;

/** The reports a read of format kpl answers. */
public class SinkReportTest {
    private static CaseInsensitiveStringMap options(Map<String, String> options) {
        return new CaseInsensitiveStringMap(options);
    }

    @Test
    public void aReadNamesItsReportInAnyCaseOrIsNoReport() {
        assertFalse(SinkReport.requested(options(Map.of())).isPresent());
        assertEquals(SinkReport.PRODUCER_STATS, SinkReport.requested(options(Map.of("REPORT", "producerstats"))).get());
        assertEquals("Option 'report': expected one of writeResult, writeSettings, producerSettings, producerStats, "
            + "got 'nope'", assertThrows(IllegalArgumentException.class,
                () -> SinkReport.requested(options(Map.of("report", "nope")))).getMessage());
        assertEquals(Map.of("writeId", "w"), SinkReport.otherOptions(options(Map.of("Report", "x", "writeId", "w"))));
    }

    @Test
    public void aWriteResultIsOneRowOfTheWritesFiguresInMetricOrder() {
        WriteResults.publish("report-test", WriteSummary.ofReplayedRows(4));

        List<InternalRow> rows = SinkReport.WRITE_RESULT.rows(Map.of("WRITEID", "report-test"));

        assertEquals(1, rows.size());
        assertEquals(WriteMetric.values().length, SinkReport.WRITE_RESULT.schema().fields().length);
        assertEquals(4, rows.get(0).getLong(WriteMetric.RECORDS_REPLAYED.ordinal()));
        assertEquals("records_replayed", SinkReport.WRITE_RESULT.schema().fields()[WriteMetric.RECORDS_REPLAYED.ordinal()]
            .name());
    }
}
