package sparkkpl.config;

/** The choices of option {@code schemaDataFormat}: the registry's data format of the records' schema. */
public enum SchemaDataFormat {
    /** The Avro schema format=avro derives from the rows' columns. */
    AVRO
}
