package sparkkpl.metrics;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A streaming query's figures for Spark's progress reports ({@code query.lastProgress["sink"]["metrics"]}):
 * those of the micro-batches committed since the last report. Spark asks once per trigger, after the
 * trigger's batch committed, so each report holds its own batch's figures, and a trigger without data
 * reports zeros instead of repeating the last batch's (an alarm on {@code records_failed} fires once).
 */
public final class ProgressFigures {
    private WriteSummary sinceLastReport = WriteSummary.EMPTY;

    public synchronized void committed(WriteSummary batch) {
        sinceLastReport = sinceLastReport.plus(batch);
    }

    /** The figures since the last report, by {@link WriteMetric#key()}, as decimal strings (as Spark takes them). */
    public synchronized Map<String, String> takeForReport() {
        Map<String, String> figures = new LinkedHashMap<>();
        sinceLastReport.toMap().forEach((key, value) -> figures.put(key, Long.toString(value)));
        sinceLastReport = WriteSummary.EMPTY;
        return figures;
    }
}
