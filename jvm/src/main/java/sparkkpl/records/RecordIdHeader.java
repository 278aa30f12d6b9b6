package sparkkpl.records;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.UUID;

/**
 * The {@code recordId=prefix} header: 48 bytes put before each record's data, naming the record so
 * that a task retry re-sends it under the same id and consumers can drop the duplicate (Kinesis has
 * no idempotent put). Layout, all big-endian:
 * <pre>
 *  0  4  magic "SKR" + version 0x02
 *  4 16  write id: Spark's id of the write (a streaming query's id, kept in its checkpoint), or
 *        the UUID of the name the user gave the logical write (writeName)
 * 20  8  batch id: the micro-batch (epoch) id of a streaming write, 0 for a batch write
 * 28  4  Spark partition id
 * 32 12  content digest: the first 96 bits of the MD5 of the record's stream, partition key (unless
 *        the sink drew it at random), explicit hash key and data
 * 44  4  occurrence: how many records of the same task with the same digest came before it
 * </pre>
 * Why content and not the row's position: after a shuffle, a retried task gets the same set of rows
 * (hash partitioning sends a row to the same reduce partition; round-robin {@code repartition(n)}
 * sorts first, {@code spark.sql.execution.sortBeforeRepartition}) but not necessarily in the same
 * order, so a position would name another row on the retry and a consumer would drop a distinct
 * record. Identical records are interchangeable, so numbering them in arrival order is safe. 96 bits
 * keep accidental collisions negligible (about 10^-11 for 10^9 records of one task). Version 1
 * (row number instead of digest and occurrence, 40 bytes) is still read by {@code spark_kpl.dedup}.
 */
public final class RecordIdHeader implements Serializable {
    private static final long serialVersionUID = 2L;
    static final byte[] MAGIC = {'S', 'K', 'R', 2};

    /** The header's fields in order, as {@link Task#prefix} writes them. */
    public enum Field {
        MAGIC(4, false), WRITE_ID(16, false), BATCH_ID(8, true), PARTITION(4, true), DIGEST(12, false),
        OCCURRENCE(4, true);

        /** How many bytes the field takes. */
        public final int bytes;
        /** Whether it is a signed big-endian number; otherwise raw bytes. */
        public final boolean number;

        Field(int bytes, boolean number) {
            this.bytes = bytes;
            this.number = number;
        }
    }

    public static final int SIZE = Arrays.stream(Field.values()).mapToInt(field -> field.bytes).sum();
    static final int DIGEST_BYTES = Field.DIGEST.bytes;

    private final UUID writeId;

    /** The magic and version every header starts with. */
    public static byte[] magic() {
        return MAGIC.clone();
    }

    /** @param writeId Spark's write or query id; a UUID, else hashed into one */
    public RecordIdHeader(String writeId) {
        UUID parsed;
        try {
            parsed = UUID.fromString(writeId);
        } catch (IllegalArgumentException e) {
            parsed = nameId(writeId);
        }
        this.writeId = parsed;
    }

    private RecordIdHeader(UUID writeId) {
        this.writeId = writeId;
    }

    /** Ids for the logical write the user named (option writeName): the same on every run of it. */
    public static RecordIdHeader named(String writeName) {
        return new RecordIdHeader(nameId(writeName));
    }

    /** The name-based UUID (version 3) of the name's UTF-8 bytes, as {@code spark_kpl.dedup.write_id} computes it. */
    private static UUID nameId(String name) {
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
    }

    /** One task's ids: they count identical records, so one instance per task attempt. */
    public Task forTask(long batchId, int partition) {
        return new Task(batchId, partition);
    }

    public final class Task {
        private final long batchId;
        private final int partition;
        private final DigestOccurrences occurrences = new DigestOccurrences();
        private final MessageDigest md5;

        private Task(long batchId, int partition) {
            this.batchId = batchId;
            this.partition = partition;
            try {
                md5 = MessageDigest.getInstance("MD5");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("every Java runtime has MD5", e);
            }
        }

        /** {@code data} with the header before it; {@code partitionKey} null when the sink drew it at random. */
        byte[] prefix(String stream, String partitionKey, String explicitHashKey, byte[] data) {
            byte[] digest = digest(stream, partitionKey, explicitHashKey, data);
            int occurrence = occurrences.next(ByteBuffer.wrap(digest).getLong());
            return ByteBuffer.allocate(SIZE + data.length).put(MAGIC)
                .putLong(writeId.getMostSignificantBits()).putLong(writeId.getLeastSignificantBits())
                .putLong(batchId).putInt(partition).put(digest, 0, DIGEST_BYTES).putInt(occurrence)
                .put(data).array();
        }

        private byte[] digest(String stream, String partitionKey, String explicitHashKey, byte[] data) {
            for (String part : new String[] {stream, partitionKey, explicitHashKey}) {
                // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ; -1 for a missing part.
                byte[] bytes = part == null ? null : part.getBytes(StandardCharsets.UTF_8);
                md5.update(ByteBuffer.allocate(4).putInt(bytes == null ? -1 : bytes.length).array());
                if (bytes != null) {
                    md5.update(bytes);
                }
            }
            md5.update(data);
            return md5.digest();
        }
    }
}
