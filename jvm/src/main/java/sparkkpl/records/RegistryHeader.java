package sparkkpl.records;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.UUID;
import java.util.zip.DeflaterOutputStream;

/**
 * The Glue Schema Registry's header before each record's data, as its serializer writes it: the header
 * version (3), the compression (0 none, 5 zlib), the schema version id (16 bytes, most significant half
 * first); then the serialized row, zlib-deflated when compressed. Made on the driver, applied in the tasks.
 */
public final class RegistryHeader implements Serializable {
    private static final long serialVersionUID = 1L;
    static final byte VERSION = 3;
    static final byte NO_COMPRESSION = 0;
    static final byte ZLIB = 5;
    static final int SIZE = 18;

    private final byte[] header;
    private final boolean zlib;

    RegistryHeader(UUID schemaVersionId, boolean zlib) {
        this.zlib = zlib;
        this.header = ByteBuffer.allocate(SIZE).put(VERSION).put(zlib ? ZLIB : NO_COMPRESSION)
            .putLong(schemaVersionId.getMostSignificantBits()).putLong(schemaVersionId.getLeastSignificantBits())
            .array();
    }

    /** The record's data: this header, then the row's bytes (deflated with zlib compression). */
    byte[] frame(byte[] row) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(SIZE + row.length);
        out.writeBytes(header);
        if (zlib) {
            try (DeflaterOutputStream deflating = new DeflaterOutputStream(out)) {
                deflating.write(row);
            } catch (IOException e) {
                throw new IllegalStateException("zlib compression of a row failed: " + e, e);
            }
        } else {
            out.writeBytes(row);
        }
        return out.toByteArray();
    }
}
