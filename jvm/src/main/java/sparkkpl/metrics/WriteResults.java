package sparkkpl.metrics;

import java.util.Map;

/**
 * Keeps a committed write's summary on the driver, by the result key spark_kpl.write gave it (option
 * sparkkpl.resultKey), until its writeResult report is read: at once, by the thread whose save() returned.
 * A result never read (the caller gone between the two, or a key set by hand) would stay for the
 * driver's life, so past {@link #MAX_UNREAD} the oldest go: far more writes than a driver commits at once.
 */
public final class WriteResults {
    static final int MAX_UNREAD = 1_000;
    private static final Map<String, WriteSummary> RESULTS = NewestEntries.upTo(MAX_UNREAD);

    private WriteResults() {}

    public static void publish(String resultKey, WriteSummary summary) {
        RESULTS.put(resultKey, summary);
    }

    public static WriteSummary take(String resultKey) {
        WriteSummary summary = RESULTS.remove(resultKey);
        if (summary == null) {
            throw new IllegalStateException("The kpl write " + resultKey + " finished without committing a result (or "
                + "its result was dropped, " + MAX_UNREAD + " later ones waiting to be read)");
        }
        return summary;
    }
}
