package sparkkpl.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Hands a committed write's summary from the sink to the Python API's call on the driver. */
final class WriteResults {
    private static final Map<String, WriteSummary> RESULTS = new ConcurrentHashMap<>();

    private WriteResults() {}

    static void publish(String writeId, WriteSummary summary) {
        RESULTS.put(writeId, summary);
    }

    static WriteSummary take(String writeId) {
        WriteSummary summary = RESULTS.remove(writeId);
        if (summary == null) {
            throw new IllegalStateException("The kpl write " + writeId + " finished without committing a result");
        }
        return summary;
    }
}
