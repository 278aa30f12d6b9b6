package sparkkpl.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Keeps a committed write's summary on the driver, by write id, until its writeResult report is read. */
public final class WriteResults {
    private static final Map<String, WriteSummary> RESULTS = new ConcurrentHashMap<>();

    private WriteResults() {}

    public static void publish(String writeId, WriteSummary summary) {
        RESULTS.put(writeId, summary);
    }

    public static WriteSummary take(String writeId) {
        WriteSummary summary = RESULTS.remove(writeId);
        if (summary == null) {
            throw new IllegalStateException("The kpl write " + writeId + " finished without committing a result");
        }
        return summary;
    }
}
