package sparkkpl.config;

/**
 * The choices of option {@code schemaCompatibility}: the compatibility mode a schema the sink registers is
 * created with, as the Glue Schema Registry names them.
 */
public enum SchemaCompatibility {
    NONE,
    DISABLED,
    BACKWARD,
    BACKWARD_ALL,
    FORWARD,
    FORWARD_ALL,
    FULL,
    FULL_ALL
}
