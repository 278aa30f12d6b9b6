package sparkkpl.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.metrics.WriteMetric;
import sparkkpl.metrics.WriteResults;
import sparkkpl.producer.ProducerRegistry;

/**
 * What {@code spark.read.format("kpl").option("report", name)} answers: a few rows the driver
 * holds, through Spark's own DataFrame API. It is how {@code spark_kpl} reads a write's figures and
 * settings on any session, a Spark Connect session included, where Python cannot call the JVM.
 */
public enum SinkReport {
    /** One row of a write's figures, by the result key the write was given (option {@code resultKey}); read once. */
    WRITE_RESULT("writeResult") {
        @Override
        StructType schema() {
            StructType schema = new StructType();
            for (WriteMetric metric : WriteMetric.values()) {
                schema = schema.add(metric.key(), DataTypes.LongType, false);
            }
            return schema;
        }

        @Override
        List<InternalRow> rows(Map<String, String> options) {
            String resultKey = resultKey(new CaseInsensitiveStringMap(options));
            if (resultKey == null) {
                throw new IllegalArgumentException("Option 'report'=writeResult needs the option '" + RESULT_KEY_OPTION
                    + "', the result key the write was given");
            }
            Map<String, Long> figures = WriteResults.take(resultKey).toMap();
            return List.of(new GenericInternalRow(figures.values().toArray()));
        }
    },
    /** (setting, value): what a write with the other options would run with; bad ones fail, naming them. */
    WRITE_SETTINGS("writeSettings") {
        @Override
        StructType schema() {
            return new StructType().add("setting", DataTypes.StringType, false).add("value", DataTypes.StringType);
        }

        @Override
        List<InternalRow> rows(Map<String, String> options) {
            List<InternalRow> rows = new ArrayList<>();
            ReportedResolutions.read(KplTable.sessionConf(), options).options().settings().forEach((setting, value) ->
                rows.add(new GenericInternalRow(new Object[] {text(setting), text(value)})));
            return rows;
        }
    },
    /** (producer, setting, value): what each producer of the driver JVM runs with. */
    PRODUCER_SETTINGS("producerSettings", DataTypes.StringType,
        () -> perProducer(ProducerRegistry.settings(), SinkReport::text)),
    /** (producer, setting, value): the live figures of each producer of the driver JVM. */
    PRODUCER_STATS("producerStats", DataTypes.LongType, () -> perProducer(ProducerRegistry.stats(), value -> value));

    /** The read option naming the report. */
    public static final String OPTION = "report";
    /** writeResult's option: the result key the write was given (its internal option {@code sparkkpl.resultKey}). */
    public static final String RESULT_KEY_OPTION = "resultKey";
    /** What {@link #RESULT_KEY_OPTION} was called up to 0.2.0, still taken with a warning. */
    private static final String DEPRECATED_RESULT_KEY_OPTION = "writeId";
    private static final Logger LOG = LoggerFactory.getLogger(SinkReport.class);

    private final String optionValue;
    /** For a per-producer report: the type of its values, and its rows. */
    private final DataType producerValueType;
    private final Supplier<List<InternalRow>> producerRows;

    SinkReport(String optionValue) {
        this(optionValue, null, null);
    }

    SinkReport(String optionValue, DataType producerValueType, Supplier<List<InternalRow>> producerRows) {
        this.optionValue = optionValue;
        this.producerValueType = producerValueType;
        this.producerRows = producerRows;
    }

    /** A per-producer report's (producer, setting, value); the other reports override it. */
    StructType schema() {
        return new StructType().add("producer", DataTypes.IntegerType, false)
            .add("setting", DataTypes.StringType, false).add("value", producerValueType);
    }

    /**
     * Runs on the driver when Spark plans the read; {@code options} are the read's, without {@code report}, their
     * names in any case (Spark Connect hands them on lower-cased). A per-producer report ignores them.
     */
    List<InternalRow> rows(Map<String, String> options) {
        return producerRows.get();
    }

    public String optionValue() {
        return optionValue;
    }

    /** The names of the report's columns, in order. */
    public List<String> columns() {
        return List.of(schema().fieldNames());
    }

    /** The report a read asks for, or empty when the read names none (and so is no report). */
    static Optional<SinkReport> requested(CaseInsensitiveStringMap options) {
        String wanted = options.get(OPTION);
        if (wanted == null) {
            return Optional.empty();
        }
        List<String> names = new ArrayList<>();
        for (SinkReport report : values()) {
            if (report.optionValue.equalsIgnoreCase(wanted)) {
                return Optional.of(report);
            }
            names.add(report.optionValue);
        }
        throw new IllegalArgumentException("Option 'report': expected one of " + String.join(", ", names)
            + ", got '" + wanted + "'");
    }

    /** writeResult's result key, under its name or the deprecated one. */
    private static String resultKey(CaseInsensitiveStringMap options) {
        String resultKey = options.get(RESULT_KEY_OPTION);
        if (resultKey == null && options.containsKey(DEPRECATED_RESULT_KEY_OPTION)) {
            LOG.warn("Option '{}' of report={} is deprecated: name it '{}'", DEPRECATED_RESULT_KEY_OPTION,
                WRITE_RESULT.optionValue, RESULT_KEY_OPTION);
            resultKey = options.get(DEPRECATED_RESULT_KEY_OPTION);
        }
        return resultKey;
    }

    /** The read's options as given, less {@code report} itself. */
    static Map<String, String> otherOptions(CaseInsensitiveStringMap options) {
        Map<String, String> others = new HashMap<>(options.asCaseSensitiveMap());
        others.keySet().removeIf(key -> key.toLowerCase(Locale.ROOT).equals(OPTION));
        return others;
    }

    private static <V> List<InternalRow> perProducer(List<Map<String, V>> producers,
                                                      Function<V, Object> cell) {
        List<InternalRow> rows = new ArrayList<>();
        for (int producer = 0; producer < producers.size(); producer++) {
            for (Map.Entry<String, V> entry : producers.get(producer).entrySet()) {
                rows.add(new GenericInternalRow(new Object[] {producer, text(entry.getKey()),
                    cell.apply(entry.getValue())}));
            }
        }
        return rows;
    }

    private static UTF8String text(String value) {
        return value == null ? null : UTF8String.fromString(value);
    }
}
