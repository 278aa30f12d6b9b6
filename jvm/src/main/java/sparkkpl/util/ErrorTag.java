package sparkkpl.util;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The machine-readable end of an error message the Python package turns into its own exception.
 * Through Spark Connect only an exception's class name and message text reach the client, so the
 * facts it needs ride in the message: {@code [spark-kpl <Kind> <one-line JSON object>]}. The kinds and
 * their fields are declared here once; {@code tools.SinkFacts} hands them to Python.
 */
public final class ErrorTag {
    /** What every tag starts with, before its kind. */
    public static final String OPENING = "[spark-kpl ";
    private static final Pattern PLACE = Pattern.compile("\\{(\\w+)\\}");

    private ErrorTag() {}

    /** Each kind is the name of the Python exception it becomes, whose parameters are its fields in snake case. */
    public enum Kind {
        RECORDS_NOT_DELIVERED("RecordsNotDelivered", "stream", "partitionKey", "explicitHashKey", "sparkPartition",
            "row", "column", "errorCode", "errorMessage"),
        PRODUCER_FAILED("ProducerFailed", "recordsInDoubt", "recordsAdded", "reason"),
        STREAM_RECREATED("StreamRecreated", "stream");

        private final String pythonName;
        private final List<String> fields;

        Kind(String pythonName, String... fields) {
            this.pythonName = pythonName;
            this.fields = List.of(fields);
        }

        public String pythonName() {
            return pythonName;
        }

        public List<String> fields() {
            return fields;
        }

        /**
         * The tag, its fields' values in declared order: strings quoted, numbers as they are, and null
         * for a value not given (only trailing fields may be left out).
         */
        public String of(Object... values) {
            if (values.length > fields.size()) {
                throw new IllegalArgumentException(pythonName + " has " + fields.size() + " fields, given "
                    + values.length);
            }
            StringBuilder json = new StringBuilder("{");
            for (int i = 0; i < fields.size(); i++) {
                Object value = valueAt(values, i);
                boolean bare = value == null || value instanceof Number;
                json.append(i == 0 ? "" : ",").append(JsonText.quoted(fields.get(i))).append(':')
                    .append(bare ? String.valueOf(value) : JsonText.quoted(value.toString()));
            }
            return " " + OPENING + pythonName + " " + json.append("}]");
        }

        /** {@code template} with each {@code {field}} replaced by that field's value (values in declared order). */
        public String fill(String template, Object... values) {
            Matcher place = PLACE.matcher(template);
            StringBuilder out = new StringBuilder();
            while (place.find()) {
                int index = fields.indexOf(place.group(1));
                if (index < 0) {
                    throw new IllegalArgumentException(pythonName + " has no field " + place.group(1));
                }
                place.appendReplacement(out, Matcher.quoteReplacement(String.valueOf(valueAt(values, index))));
            }
            return place.appendTail(out).toString();
        }

        private static Object valueAt(Object[] values, int index) {
            return index < values.length ? values[index] : null;
        }
    }

    /** Whether {@code error} or one of its causes already carries a tag. */
    public static boolean taggedIn(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e.getMessage() != null && e.getMessage().contains(" " + OPENING)) {
                return true;
            }
        }
        return false;
    }
}
