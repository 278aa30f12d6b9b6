package sparkkpl.config;

/** The choices of option {@code nullData}: what a row whose data column is null does. */
public enum NullData {
    /** An undelivered record (see failOnError). */
    FAIL,
    /** Not sent, counted as skipped. */
    SKIP
}
