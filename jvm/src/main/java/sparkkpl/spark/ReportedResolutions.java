package sparkkpl.spark;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;

/**
 * The resolutions the writeSettings report made for {@code spark_kpl.write}, kept by the write's result
 * key for the write that follows: Python reads what it needs (the stream, the format) from the very
 * resolution its write then runs with, so the write is resolved once. A write takes its resolution
 * only if made from the same options and {@code spark.kpl.*} keys; a write Python refused after the
 * report never comes for it, so past {@link #MAX_KEPT} the oldest go.
 */
final class ReportedResolutions {
    static final int MAX_KEPT = 100;
    private static final Logger LOG = LoggerFactory.getLogger(ReportedResolutions.class);

    /** What a resolution reads: the session's {@code spark.kpl.*} keys, and the options by name in any case. */
    private record Inputs(Map<String, String> confKeys, Map<String, String> options) {
        static Inputs of(Map<String, String> sessionConf, Map<String, String> options) {
            Map<String, String> confKeys = new TreeMap<>();
            sessionConf.forEach((key, value) -> {
                if (key.startsWith(SinkOption.CONF_PREFIX)) {
                    confKeys.put(key, value);
                }
            });
            Map<String, String> byName = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            byName.putAll(options);
            return new Inputs(confKeys, byName);
        }
    }

    private record Kept(Inputs inputs, WriteConfig config) {}

    private static final Map<String, Kept> KEPT = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Kept> eldest) {
            return size() > MAX_KEPT;
        }
    });

    private ReportedResolutions() {}

    /** A write's options resolved as the write resolves them, kept for it when they carry its result key. */
    static WriteConfig read(Map<String, String> sessionConf, Map<String, String> options) {
        WriteConfig config = WriteConfig.read(sessionConf, options);
        String resultKey = config.options().resultKey();
        if (resultKey != null) {
            KEPT.put(resultKey, new Kept(Inputs.of(sessionConf, options), config));
        }
        return config;
    }

    /** The resolution the report kept for this write, if made from the same inputs; else the write's own. */
    static WriteConfig take(Map<String, String> sessionConf, Map<String, String> options) {
        Inputs inputs = Inputs.of(sessionConf, options);
        String resultKey = inputs.options().get(SinkOption.RESULT_KEY.optionName());
        Kept kept = resultKey == null ? null : KEPT.remove(resultKey);
        if (kept != null && kept.inputs().equals(inputs)) {
            return kept.config();
        }
        if (kept != null) {
            LOG.info("Write {}: its options or spark.kpl.* keys changed since its writeSettings report; resolved again",
                resultKey);
        }
        return WriteConfig.read(sessionConf, options);
    }
}
