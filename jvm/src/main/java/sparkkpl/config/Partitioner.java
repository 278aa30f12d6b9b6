package sparkkpl.config;

/** The choices of option {@code partitioner}: where partition keys come from. */
public enum Partitioner {
    /** 128 random bits per record. */
    RANDOM,
    /** The Spark partition id. */
    FIXED,
    /** The rows' partitionKey column. */
    COLUMN
}
