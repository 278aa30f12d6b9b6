package sparkkpl.tools;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import sparkkpl.metrics.WriteMetric;
import sparkkpl.records.RecordIdHeader;
import sparkkpl.records.RowLayout;

/**
 * Writes python/spark_kpl/sink_facts.json from the JVM declarations themselves: the metric names,
 * the sink's column names and the record-id header layout, which the Python package reads instead of
 * repeating them. Run by scripts/gen-docs.sh; a test fails when the committed file differs from its output.
 */
public final class SinkFacts {
    private SinkFacts() {}

    public static void main(String[] args) {
        System.out.print(json());
    }

    static String json() {
        String metrics = Arrays.stream(WriteMetric.values()).map(metric -> quoted(metric.key()))
            .collect(Collectors.joining(", ", "[", "]"));
        String fields = Arrays.stream(RecordIdHeader.Field.values())
            .map(field -> "{\"name\": " + quoted(field.name().toLowerCase(Locale.ROOT)) + ", \"bytes\": " + field.bytes
                + ", \"number\": " + field.number + "}")
            .collect(Collectors.joining(",\n      ", "[\n      ", "\n    ]"));
        return "{\n"
            + "  \"generated\": \"by scripts/gen-docs.sh from the JVM declarations; do not edit\",\n"
            + "  \"metrics\": " + metrics + ",\n"
            + "  \"sinkColumns\": {" + String.join(", ", sinkColumns()) + "},\n"
            + "  \"recordId\": {\n"
            + "    \"magic\": " + quoted(HexFormat.of().formatHex(RecordIdHeader.magic())) + ",\n"
            + "    \"size\": " + RecordIdHeader.SIZE + ",\n"
            + "    \"fields\": " + fields + "\n"
            + "  }\n"
            + "}\n";
    }

    /** Every column-name constant RowLayout declares, by constant name, so a new column needs no edit here. */
    private static List<String> sinkColumns() {
        List<String> columns = new ArrayList<>();
        for (Field constant : RowLayout.class.getFields()) {
            if (Modifier.isStatic(constant.getModifiers()) && constant.getType() == String.class) {
                try {
                    columns.add(quoted(constant.getName()) + ": " + quoted((String) constant.get(null)));
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException("a public constant is readable", e);
                }
            }
        }
        columns.sort(null); // getFields() promises no order; the file must not change between runs
        return columns;
    }

    /** The names here are Java identifiers and column names, which need no escaping but quotes. */
    private static String quoted(String text) {
        if (text.contains("\"") || text.contains("\\")) {
            throw new IllegalArgumentException("not a plain name: " + text);
        }
        return "\"" + text + "\"";
    }
}
