package sparkkpl.aggregation;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds one record in the KPL's aggregated format: the magic bytes {@code F3 89 9A C2}, an
 * {@code AggregatedRecord} protobuf (partition key table, explicit hash key table, records), and
 * the MD5 of the protobuf bytes. Every KPL-aware consumer (the KCL, {@code aws-kinesis-agg})
 * reads it as the user records it holds.
 *
 * <p>Its size is counted exactly as the KPL counts its own aggregates against
 * {@code AggregationMaxSize}: 4 + protobuf + 16 bytes, the outer partition key not included.
 * Records are added until the next would go over the limit; the first record is always taken, so a
 * record too large for any aggregate ends up alone, and {@link #isSingle} tells the caller to send it
 * as it is. Keys are de-duplicated in the tables, and explicit hash keys are written only for
 * records that have one: the KCL computes the others from the partition key.
 *
 * <p>Written straight with protobuf's {@link CodedOutputStream} in the field order of
 * {@code messages.proto}, rather than through the generated builders the KPL jar carries: no object
 * per record, and the size is known before the bytes are written (see docs/aggregation.md for the
 * cost of each). Not thread-safe.
 */
public final class AggregateBuilder {
    /** The KPL's default {@code AggregationMaxSize}: 2 Kinesis payload units of 25 KiB. */
    public static final int DEFAULT_MAX_BYTES = 51_200;
    static final byte[] MAGIC = {(byte) 0xF3, (byte) 0x89, (byte) 0x9A, (byte) 0xC2};
    static final int MD5_BYTES = 16;
    private static final int PARTITION_KEY_TABLE = 1;
    private static final int EXPLICIT_HASH_KEY_TABLE = 2;
    private static final int RECORDS = 3;
    private static final int RECORD_PARTITION_KEY_INDEX = 1;
    private static final int RECORD_EXPLICIT_HASH_KEY_INDEX = 2;
    private static final int RECORD_DATA = 3;

    private record Entry(int partitionKeyIndex, int explicitHashKeyIndex, byte[] data, int bodyBytes) {}

    private final int maxBytes;
    private final Map<String, Integer> partitionKeys = new HashMap<>();
    private final List<String> partitionKeyTable = new ArrayList<>();
    private final Map<String, Integer> explicitHashKeys = new HashMap<>();
    private final List<String> explicitHashKeyTable = new ArrayList<>();
    private final List<Entry> entries = new ArrayList<>();
    /** The protobuf's size so far. */
    private int protobufBytes;

    /** @param maxBytes the most bytes an aggregate of several records may have, as the KPL counts them */
    public AggregateBuilder(int maxBytes) {
        this.maxBytes = maxBytes;
    }

    /**
     * Adds a user record unless that would take a non-empty aggregate over the size limit.
     *
     * @param explicitHashKey its decimal explicit hash key, or null
     * @return whether it was added; if not, {@link #build} this aggregate and add it to the next
     */
    public boolean tryAdd(String partitionKey, String explicitHashKey, byte[] data) {
        Integer pkIndex = partitionKeys.get(partitionKey);
        Integer ehkIndex = explicitHashKey == null ? null : explicitHashKeys.get(explicitHashKey);
        int added = 0;
        if (pkIndex == null) {
            added += CodedOutputStream.computeStringSize(PARTITION_KEY_TABLE, partitionKey);
        }
        if (explicitHashKey != null && ehkIndex == null) {
            added += CodedOutputStream.computeStringSize(EXPLICIT_HASH_KEY_TABLE, explicitHashKey);
        }
        int newPkIndex = pkIndex != null ? pkIndex : partitionKeyTable.size();
        int newEhkIndex = explicitHashKey == null ? -1 : ehkIndex != null ? ehkIndex : explicitHashKeyTable.size();
        int body = CodedOutputStream.computeUInt64Size(RECORD_PARTITION_KEY_INDEX, newPkIndex)
            + (newEhkIndex < 0 ? 0 : CodedOutputStream.computeUInt64Size(RECORD_EXPLICIT_HASH_KEY_INDEX, newEhkIndex))
            + CodedOutputStream.computeByteArraySize(RECORD_DATA, data);
        added += CodedOutputStream.computeTagSize(RECORDS) + CodedOutputStream.computeUInt32SizeNoTag(body) + body;
        if (!entries.isEmpty() && MAGIC.length + protobufBytes + added + MD5_BYTES > maxBytes) {
            return false;
        }
        if (pkIndex == null) {
            partitionKeys.put(partitionKey, newPkIndex);
            partitionKeyTable.add(partitionKey);
        }
        if (explicitHashKey != null && ehkIndex == null) {
            explicitHashKeys.put(explicitHashKey, newEhkIndex);
            explicitHashKeyTable.add(explicitHashKey);
        }
        entries.add(new Entry(newPkIndex, newEhkIndex, data, body));
        protobufBytes += added;
        return true;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** Whether it holds one record only: the KPL sends such a record as it is, and so does the sink. */
    public boolean isSingle() {
        return entries.size() == 1;
    }

    public int count() {
        return entries.size();
    }

    /** The aggregate's size as the KPL counts it: magic, protobuf, MD5. */
    public int sizeBytes() {
        return MAGIC.length + protobufBytes + MD5_BYTES;
    }

    /** The aggregated record of everything added; then empty again for the next. */
    public byte[] build() {
        byte[] out = new byte[sizeBytes()];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        CodedOutputStream protobuf = CodedOutputStream.newInstance(out, MAGIC.length, protobufBytes);
        try {
            for (String key : partitionKeyTable) {
                protobuf.writeString(PARTITION_KEY_TABLE, key);
            }
            for (String key : explicitHashKeyTable) {
                protobuf.writeString(EXPLICIT_HASH_KEY_TABLE, key);
            }
            for (Entry entry : entries) {
                protobuf.writeTag(RECORDS, com.google.protobuf.WireFormat.WIRETYPE_LENGTH_DELIMITED);
                protobuf.writeUInt32NoTag(entry.bodyBytes());
                protobuf.writeUInt64(RECORD_PARTITION_KEY_INDEX, entry.partitionKeyIndex());
                if (entry.explicitHashKeyIndex() >= 0) {
                    protobuf.writeUInt64(RECORD_EXPLICIT_HASH_KEY_INDEX, entry.explicitHashKeyIndex());
                }
                protobuf.writeByteArray(RECORD_DATA, entry.data());
            }
            protobuf.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new IllegalStateException("the aggregate's size was miscounted", e);
        }
        System.arraycopy(HashKeys.md5(out, MAGIC.length, protobufBytes), 0, out, MAGIC.length + protobufBytes, MD5_BYTES);
        clear();
        return out;
    }

    /** Drops what was added, for the next aggregate. */
    public void clear() {
        partitionKeys.clear();
        partitionKeyTable.clear();
        explicitHashKeys.clear();
        explicitHashKeyTable.clear();
        entries.clear();
        protobufBytes = 0;
    }
}
