package sparkkpl.config;

/** The choices of option {@code format}: how a record's data is made from a row. */
public enum Format {
    /** The data column as it is. */
    RAW,
    /** Every other column, as Spark's to_json writes it. */
    JSON,
    /** Every other column, as Spark's to_avro writes it. */
    AVRO
}
