package sparkkpl.spark;

import java.util.Map;
import java.util.UUID;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.producer.ProducerRegistry;

/** The one JVM entry point that {@code spark_kpl} calls through {@code sc._jvm}; strings and maps only. */
public final class PythonApi {
    private PythonApi() {}

    /**
     * Writes a DataFrame already shaped into the sink's columns, through the {@code kpl} source.
     *
     * @return the summary under the names the Python result object uses
     */
    public static Map<String, Long> write(Dataset<Row> frame, Map<String, String> options) {
        String writeId = UUID.randomUUID().toString();
        frame.write().format(KplDataSource.SHORT_NAME).options(options)
            .option(SinkOption.WRITE_ID.optionName(), writeId).mode("append").save();
        return WriteResults.take(writeId).toMap();
    }

    /**
     * What a write with these options would run with, resolved against the active session's
     * {@code spark.kpl.*} keys exactly as a write resolves them; secrets masked.
     *
     * @throws IllegalArgumentException as the write would, naming the option or key
     */
    public static Map<String, String> writeSettings(Map<String, String> options) {
        return WriteConfig.resolve(KplTable.sessionConf(), options).settings();
    }

    /** What this JVM's producers run with (on the driver: those of local-mode tasks). */
    public static java.util.List<Map<String, String>> producerSettings() {
        return ProducerRegistry.settings();
    }

    /** Live figures of this JVM's producers (on the driver: those of local-mode tasks). */
    public static java.util.List<Map<String, Long>> producerStats() {
        return ProducerRegistry.stats();
    }
}
