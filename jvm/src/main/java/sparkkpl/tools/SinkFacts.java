package sparkkpl.tools;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import sparkkpl.config.SinkOption;
import sparkkpl.failures.FailedRecords;
import sparkkpl.metrics.WriteMetric;
import sparkkpl.producer.ProducerFailedException;
import sparkkpl.records.RecordIdHeader;
import sparkkpl.records.RowLayout;
import sparkkpl.spark.KplDataSource;
import sparkkpl.spark.KplPlugin;
import sparkkpl.spark.SinkReport;
import sparkkpl.spark.SinkTaskFailedException;
import sparkkpl.spark.StreamRecreatedException;
import sparkkpl.util.ErrorTag;
import sparkkpl.util.JsonText;

/**
 * Writes python/spark_kpl/sink_facts.json from the JVM declarations themselves: every name the Python
 * package hands to the JVM or reads back from it (the data source, its options and config keys with
 * their choices, its reports and their columns, the metrics, the sink's columns, the error tags and the
 * sentence naming an undelivered record, the daemon-placing tool) and the record-id header layout. Python
 * reads them instead of repeating them. Run by scripts/gen-docs.sh; a test fails when the committed file
 * differs from its output.
 */
public final class SinkFacts {
    /** A container that fits in this many characters stays on one line. */
    private static final int LINE = 110;

    /**
     * The exceptions a task of the sink fails with, by the tag their messages end in: spark_kpl picks them out
     * of a JVM error's causes by class name where it sees the JVM error (a classic session).
     */
    private static final Map<ErrorTag.Kind, List<Class<? extends Exception>>> THROWN_WITH = Map.of(
        ErrorTag.Kind.RECORDS_NOT_DELIVERED,
        List.of(FailedRecords.UndeliveredException.class, FailedRecords.RowRefusedException.class),
        ErrorTag.Kind.PRODUCER_FAILED, List.of(ProducerFailedException.class, SinkTaskFailedException.class),
        ErrorTag.Kind.STREAM_RECREATED, List.of(StreamRecreatedException.class));

    private SinkFacts() {}

    public static void main(String[] args) {
        System.out.print(json());
    }

    static String json() {
        Map<String, Object> facts = new LinkedHashMap<>();
        facts.put("generated", "by scripts/gen-docs.sh from the JVM declarations; do not edit");
        facts.put("dataSource", KplDataSource.SHORT_NAME);
        facts.put("plugin", KplPlugin.class.getName());
        facts.put("options", options());
        facts.put("reportOption", SinkReport.OPTION);
        facts.put("resultKeyOption", SinkReport.RESULT_KEY_OPTION);
        facts.put("reports", reports());
        facts.put("metrics", Arrays.stream(WriteMetric.values()).map(WriteMetric::key).toList());
        facts.put("sinkColumns", sinkColumns());
        facts.put("errorTag", ordered("opening", ErrorTag.OPENING, "kinds", Arrays.stream(ErrorTag.Kind.values())
            .map(kind -> ordered("name", kind.pythonName(), "fields", kind.fields(), "jvmClasses",
                THROWN_WITH.get(kind).stream().map(Class::getName).toList())).toList()));
        facts.put("undeliveredRecord", ordered("kinesisFailed", FailedRecords.KINESIS_FAILED,
            "rowRefused", FailedRecords.ROW_REFUSED));
        facts.put("placeDaemon", ordered("mainClass", PlaceDaemon.class.getName(),
            "refusalPrefix", PlaceDaemon.REFUSAL_PREFIX));
        facts.put("recordId", ordered("magic", HexFormat.of().formatHex(RecordIdHeader.magic()),
            "size", RecordIdHeader.SIZE, "fields", Arrays.stream(RecordIdHeader.Field.values())
                .map(field -> ordered("name", field.name().toLowerCase(Locale.ROOT), "bytes", field.bytes,
                    "number", field.number)).toList()));
        return laidOut(facts, "") + "\n";
    }

    /** By constant name: the option's name, its config key if it may be one, and a choice option's values. */
    private static Map<String, Object> options() {
        Map<String, Object> options = new LinkedHashMap<>();
        for (SinkOption option : SinkOption.values()) {
            Map<String, Object> facts = ordered("name", option.optionName());
            if (option.isConfigKey()) {
                facts.put("configKey", option.confKey());
            }
            if (!option.choices().isEmpty()) {
                // A choice is written as its enum constant's name in lower case (SinkOption.written).
                facts.put("choices", option.choices().stream().collect(Collectors.toMap(
                    choice -> choice.toUpperCase(Locale.ROOT), choice -> choice, (a, b) -> a, LinkedHashMap::new)));
            }
            options.put(option.name(), facts);
        }
        return options;
    }

    private static Map<String, Object> reports() {
        Map<String, Object> reports = new LinkedHashMap<>();
        for (SinkReport report : SinkReport.values()) {
            reports.put(report.name(), ordered("name", report.optionValue(), "columns", report.columns()));
        }
        return reports;
    }

    /** Every column-name constant RowLayout declares, by constant name, so a new column needs no edit here. */
    private static Map<String, Object> sinkColumns() {
        Map<String, Object> columns = new TreeMap<>(); // getFields() promises no order; the file must not change
        for (Field constant : RowLayout.class.getFields()) {
            if (Modifier.isStatic(constant.getModifiers()) && constant.getType() == String.class) {
                try {
                    columns.put(constant.getName(), constant.get(null));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("a public constant is readable", e);
                }
            }
        }
        return columns;
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    /** JSON, a container on one line when it fits, else one entry per line. */
    private static String laidOut(Object value, String indent) {
        String line = inline(value);
        if (indent.length() + line.length() <= LINE || !(value instanceof Map || value instanceof List)) {
            return line;
        }
        String inner = indent + "  ";
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                .map(entry -> inner + JsonText.quoted((String) entry.getKey()) + ": "
                    + laidOut(entry.getValue(), inner))
                .collect(Collectors.joining(",\n", "{\n", "\n" + indent + "}"));
        }
        return ((List<?>) value).stream().map(item -> inner + laidOut(item, inner))
            .collect(Collectors.joining(",\n", "[\n", "\n" + indent + "]"));
    }

    private static String inline(Object value) {
        if (value instanceof Map<?, ?> map) {
            return map.entrySet().stream()
                .map(entry -> JsonText.quoted((String) entry.getKey()) + ": " + inline(entry.getValue()))
                .collect(Collectors.joining(", ", "{", "}"));
        }
        if (value instanceof List<?> list) {
            return list.stream().map(SinkFacts::inline).collect(Collectors.joining(", ", "[", "]"));
        }
        return value instanceof String text ? JsonText.quoted(text) : String.valueOf(value); // numbers, booleans
    }
}
