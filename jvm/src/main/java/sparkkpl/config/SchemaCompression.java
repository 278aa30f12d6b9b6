package sparkkpl.config;

/** The choices of option {@code schemaCompression}: how the row's bytes after the registry's header are kept. */
public enum SchemaCompression {
    /** As serialized. */
    NONE,
    /** zlib-deflated, which the registry's deserializer inflates (header byte 1 says so). */
    ZLIB
}
