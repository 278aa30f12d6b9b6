package sparkkpl.aggregation;

import com.google.protobuf.CodedOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import sparkkpl.kinesis.HashKeys;

/**
 * Builds one record in the KPL's aggregated format: the magic bytes {@code F3 89 9A C2}, an
 * {@code AggregatedRecord} protobuf (partition key table, explicit hash key table, records), and
 * the MD5 of the protobuf bytes. Every KPL-aware consumer (the KCL, {@code aws-kinesis-agg})
 * reads it as the user records it holds.
 *
 * <p>Its size is counted exactly as the KPL counts its own aggregates against
 * {@code AggregationMaxSize}: 4 + protobuf + 16 bytes, the outer partition key ({@link #PARTITION_KEY})
 * not included: Kinesis counts it, so the limit the caller gives leaves room for it.
 * Records are added until the next would go over the limit; the first record is always taken, so a
 * record too large for any aggregate ends up alone, and the caller sends it as it is. Keys are
 * de-duplicated in the tables, and explicit hash keys are written only for records that have one:
 * the KCL computes the others from the partition key.
 *
 * <p>Written straight with protobuf's {@link CodedOutputStream} in the field order of
 * {@code messages.proto}, rather than through the generated builders the KPL jar carries: no object
 * per record, and the size is known before the bytes are written (see docs/aggregation.md for the
 * cost of each). Not thread-safe.
 */
public final class AggregateBuilder {
    /**
     * The partition key an aggregate is sent under, as the KPL sends its own: one character, as it
     * counts against Kinesis's record and call limits (its sub-records carry their own keys).
     */
    public static final String PARTITION_KEY = "a";
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

    /**
     * A key as it is written: its UTF-8 bytes, encoded once by the JDK's intrinsic (protobuf's own
     * string encoder was the builder's largest cost). Its hash is mixed because String-style hashes
     * of keys that differ only in their last digits crowd a few buckets of the tables' maps.
     */
    private record Utf8Key(byte[] bytes, int hash) {
        static Utf8Key of(byte[] bytes) {
            return new Utf8Key(bytes, mix(Arrays.hashCode(bytes)));
        }

        /** MurmurHash3's 32-bit finalizer: every input bit moves about half of the output bits. */
        private static int mix(int hash) {
            hash ^= hash >>> 16;
            hash *= 0x85ebca6b;
            hash ^= hash >>> 13;
            hash *= 0xc2b2ae35;
            return hash ^ (hash >>> 16);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof Utf8Key key && Arrays.equals(bytes, key.bytes);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private final int maxBytes;
    private final Map<Utf8Key, Integer> partitionKeys = new HashMap<>();
    private final List<byte[]> partitionKeyTable = new ArrayList<>();
    private final Map<Utf8Key, Integer> explicitHashKeys = new HashMap<>();
    private final List<byte[]> explicitHashKeyTable = new ArrayList<>();
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
     * @param partitionKey its partition key's UTF-8 bytes (the caller has them for the shard lookup)
     * @param explicitHashKey its decimal explicit hash key, or null
     * @return whether it was added; if not, {@link #build} this aggregate and add it to the next
     */
    public boolean tryAdd(byte[] partitionKey, String explicitHashKey, byte[] data) {
        Utf8Key pk = Utf8Key.of(partitionKey);
        Utf8Key ehk = explicitHashKey == null ? null : Utf8Key.of(explicitHashKey.getBytes(StandardCharsets.UTF_8));
        Integer pkIndex = partitionKeys.get(pk);
        Integer ehkIndex = ehk == null ? null : explicitHashKeys.get(ehk);
        int added = 0;
        if (pkIndex == null) {
            added += CodedOutputStream.computeByteArraySize(PARTITION_KEY_TABLE, pk.bytes());
        }
        if (ehk != null && ehkIndex == null) {
            added += CodedOutputStream.computeByteArraySize(EXPLICIT_HASH_KEY_TABLE, ehk.bytes());
        }
        int newPkIndex = pkIndex != null ? pkIndex : partitionKeyTable.size();
        int newEhkIndex = ehk == null ? -1 : ehkIndex != null ? ehkIndex : explicitHashKeyTable.size();
        int body = CodedOutputStream.computeUInt64Size(RECORD_PARTITION_KEY_INDEX, newPkIndex)
            + (newEhkIndex < 0 ? 0 : CodedOutputStream.computeUInt64Size(RECORD_EXPLICIT_HASH_KEY_INDEX, newEhkIndex))
            + CodedOutputStream.computeByteArraySize(RECORD_DATA, data);
        added += CodedOutputStream.computeTagSize(RECORDS) + CodedOutputStream.computeUInt32SizeNoTag(body) + body;
        if (!entries.isEmpty() && MAGIC.length + protobufBytes + added + MD5_BYTES > maxBytes) {
            return false;
        }
        if (pkIndex == null) {
            partitionKeys.put(pk, newPkIndex);
            partitionKeyTable.add(pk.bytes());
        }
        if (ehk != null && ehkIndex == null) {
            explicitHashKeys.put(ehk, newEhkIndex);
            explicitHashKeyTable.add(ehk.bytes());
        }
        entries.add(new Entry(newPkIndex, newEhkIndex, data, body));
        protobufBytes += added;
        return true;
    }

    public boolean isEmpty() {
        return entries.isEmpty();
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
            // A protobuf string is length-delimited UTF-8 on the wire, exactly as these bytes are written.
            for (byte[] key : partitionKeyTable) {
                protobuf.writeByteArray(PARTITION_KEY_TABLE, key);
            }
            for (byte[] key : explicitHashKeyTable) {
                protobuf.writeByteArray(EXPLICIT_HASH_KEY_TABLE, key);
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
