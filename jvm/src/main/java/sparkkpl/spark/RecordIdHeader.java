package sparkkpl.spark;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The {@code recordId=prefix} header: 40 bytes put before each record's data, naming the record by
 * where it came from, so that a task retry re-sends it under the same id and consumers can drop
 * the duplicate (Kinesis has no idempotent put). Layout, all big-endian:
 * <pre>
 *  0  4  magic "SKR" + version 0x01
 *  4 16  write id: Spark's id of the write (a streaming query's id, kept in its checkpoint)
 * 20  8  batch id: the micro-batch (epoch) id of a streaming write, 0 for a batch write
 * 28  4  Spark partition id
 * 32  8  row number in the partition, from 1
 * </pre>
 * {@code spark_kpl.dedup} reads it back in Python.
 */
final class RecordIdHeader implements Serializable {
    private static final long serialVersionUID = 1L;
    static final byte[] MAGIC = {'S', 'K', 'R', 1};
    static final int SIZE = 40;

    private final UUID writeId;

    /** @param writeId Spark's write or query id; a UUID, else hashed into one */
    RecordIdHeader(String writeId) {
        UUID parsed;
        try {
            parsed = UUID.fromString(writeId);
        } catch (IllegalArgumentException e) {
            parsed = UUID.nameUUIDFromBytes(writeId.getBytes(StandardCharsets.UTF_8));
        }
        this.writeId = parsed;
    }

    byte[] prefix(byte[] data, long batchId, int partition, long rowNumber) {
        return ByteBuffer.allocate(SIZE + data.length).put(MAGIC)
            .putLong(writeId.getMostSignificantBits()).putLong(writeId.getLeastSignificantBits())
            .putLong(batchId).putInt(partition).putLong(rowNumber).put(data).array();
    }
}
