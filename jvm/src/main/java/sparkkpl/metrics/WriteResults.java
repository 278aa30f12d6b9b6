package sparkkpl.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps a committed write's summary on the driver, by the result key spark_kpl.write gave it (option
 * sparkkpl.writeId), until its writeResult report is read.
 */
public final class WriteResults {
    private static final Map<String, WriteSummary> RESULTS = new ConcurrentHashMap<>();

    private WriteResults() {}

    public static void publish(String resultKey, WriteSummary summary) {
        RESULTS.put(resultKey, summary);
    }

    public static WriteSummary take(String resultKey) {
        WriteSummary summary = RESULTS.remove(resultKey);
        if (summary == null) {
            throw new IllegalStateException("The kpl write " + resultKey + " finished without committing a result");
        }
        return summary;
    }
}
