package sparkkpl.util;

/**
 * The machine-readable end of an error message the Python package turns into its own exception.
 * Through Spark Connect only an exception's class name and message text reach the client, so the
 * facts it needs ride in the message: {@code [spark-kpl <Kind> <one-line JSON object>]}.
 */
public final class ErrorTag {
    private ErrorTag() {}

    /** {@code json} must be one JSON object on one line ({@link JsonText} escapes line breaks). */
    public static String of(String kind, String json) {
        return " [spark-kpl " + kind + " " + json + "]";
    }

    /** Whether {@code error} or one of its causes already carries a tag. */
    public static boolean taggedIn(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e.getMessage() != null && e.getMessage().contains(" [spark-kpl ")) {
                return true;
            }
        }
        return false;
    }
}
