package sparkkpl.util;

/** JSON string literals, for the few lines the sink writes as JSON without a JSON library. */
public final class JsonText {
    private JsonText() {}

    /** {@code value} as a JSON string literal, quotes included; {@code null} for null. */
    public static String quoted(String value) {
        if (value == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
