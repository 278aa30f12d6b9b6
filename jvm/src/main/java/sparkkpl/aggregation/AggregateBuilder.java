package sparkkpl.aggregation;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.WireFormat;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import sparkkpl.kinesis.HashKeys;
import sparkkpl.kinesis.KinesisRecord;

/**
 * Builds one record in the KPL's aggregated format: the magic bytes {@code F3 89 9A C2}, an
 * {@code AggregatedRecord} protobuf (partition key table, explicit hash key table, records), and
 * the MD5 of the protobuf bytes. Every KPL-aware consumer (the KCL, {@code aws-kinesis-agg})
 * reads it as the user records it holds.
 *
 * <p>Its size is counted exactly as the KPL counts its own aggregates against
 * {@code AggregationMaxSize}: 4 + protobuf + 16 bytes, the outer partition key
 * ({@link KinesisRecord#AGGREGATE_PARTITION_KEY}) not included: Kinesis counts it, so the limit the
 * caller gives leaves room for it.
 * Records are added until the next would go over the limit; the first record is always taken, so a
 * record too large for any aggregate ends up alone, and the caller sends it as it is. Keys are
 * de-duplicated in the tables, and explicit hash keys are written only for records that have one:
 * the KCL computes the others from the partition key.
 *
 * <p>Written straight in protobuf's wire format, in the field order of {@code messages.proto}, rather
 * than through the generated builders the KPL jar carries: the size is known before the bytes are
 * written (see docs/aggregation.md for the cost of each). Each record is encoded into the builder's
 * buffers as it is added, and its keys de-duplicated by an index into those buffers, so an open
 * aggregate holds no object per record and keeps none of the caller's arrays: at thousands of
 * shards a task keeps thousands of aggregates open for a second or more, and per-record objects
 * that live that long fill the old generation (see bench/README.md, "Shard count"). The buffers are
 * kept from one aggregate to the next until {@link #release}. Not thread-safe.
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

    /** Protobuf bytes being written: grown by doubling, kept for the next aggregate. */
    private static final class Buffer {
        private static final byte[] NONE = {};
        byte[] bytes = NONE;
        int length;

        /** Room for {@code more} bytes; doubling stops at {@code limit} unless one record needs more. */
        void reserve(int more, int limit) {
            int needed = length + more;
            if (needed > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(needed, Math.min(limit, Math.max(256, 2 * bytes.length))));
            }
        }

        /** A length-delimited field's tag, or a varint field's (the caller reserved the room). */
        void tag(int field, int wireType) {
            bytes[length++] = (byte) (field << 3 | wireType);
        }

        void varint(long value) {
            while ((value & ~0x7FL) != 0) {
                bytes[length++] = (byte) ((value & 0x7F) | 0x80);
                value >>>= 7;
            }
            bytes[length++] = (byte) value;
        }

        void raw(byte[] data) {
            System.arraycopy(data, 0, bytes, length, data.length);
            length += data.length;
        }

        void release() {
            bytes = NONE;
            length = 0;
        }
    }

    /**
     * One of the aggregate's key tables, encoded as it grows: each distinct key once, found again by
     * an open-addressing index of positions in the encoded bytes, not by a map of key objects.
     */
    private static final class KeyTable {
        private static final int[] NONE = {};
        final Buffer encoded = new Buffer();
        private final int field;
        /** Per slot: the key's index + 1, or 0 when free; at most half full. */
        private int[] slots = NONE;
        /** Per key: where its bytes start in {@link #encoded}, how many there are, and its hash. */
        private int[] starts = NONE;
        private int[] lengths = NONE;
        private int[] hashes = NONE;
        int count;

        KeyTable(int field) {
            this.field = field;
        }

        /** The key's index, or -1 when the table does not hold it. */
        int indexOf(byte[] key, int hash) {
            if (count == 0) {
                return -1;
            }
            int mask = slots.length - 1;
            for (int slot = hash & mask; slots[slot] != 0; slot = (slot + 1) & mask) {
                int index = slots[slot] - 1;
                int start = starts[index];
                if (Arrays.equals(encoded.bytes, start, start + lengths[index], key, 0, key.length)) {
                    return index;
                }
            }
            return -1;
        }

        /** Adds a key {@link #indexOf} did not find; its index is the count before. */
        void add(byte[] key, int hash, int limit) {
            if (2 * (count + 1) > slots.length) {
                rehash(Math.max(16, 2 * slots.length));
            }
            if (count == starts.length) {
                starts = Arrays.copyOf(starts, Math.max(16, 2 * count));
                lengths = Arrays.copyOf(lengths, starts.length);
                hashes = Arrays.copyOf(hashes, starts.length);
            }
            encoded.reserve(1 + 5 + key.length, limit);
            encoded.tag(field, WireFormat.WIRETYPE_LENGTH_DELIMITED);
            encoded.varint(key.length);
            starts[count] = encoded.length;
            lengths[count] = key.length;
            hashes[count] = hash;
            encoded.raw(key);
            place(count, hash);
            count++;
        }

        private void place(int index, int hash) {
            int mask = slots.length - 1;
            int slot = hash & mask;
            while (slots[slot] != 0) {
                slot = (slot + 1) & mask;
            }
            slots[slot] = index + 1;
        }

        private void rehash(int size) {
            slots = new int[size];
            for (int index = 0; index < count; index++) {
                place(index, hashes[index]);
            }
        }

        void clear() {
            if (count > 0) {
                Arrays.fill(slots, 0);
            }
            count = 0;
            encoded.length = 0;
        }

        void release() {
            clear();
            encoded.release();
            slots = NONE;
            starts = NONE;
            lengths = NONE;
            hashes = NONE;
        }

        int capacityBytes() {
            return encoded.bytes.length + 4 * (slots.length + 3 * starts.length);
        }
    }

    private final int maxBytes;
    private final KeyTable partitionKeys = new KeyTable(PARTITION_KEY_TABLE);
    private final KeyTable explicitHashKeys = new KeyTable(EXPLICIT_HASH_KEY_TABLE);
    /** The records' fields, encoded. */
    private final Buffer records = new Buffer();
    private int count;
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
        return tryAdd(partitionKey, explicitHashKey, data, maxBytes);
    }

    /** As {@link #tryAdd(byte[], String, byte[])}, under a limit of {@code limitBytes} (at most the builder's) for now. */
    public boolean tryAdd(byte[] partitionKey, String explicitHashKey, byte[] data, int limitBytes) {
        int pkHash = hash(partitionKey);
        byte[] ehk = explicitHashKey == null ? null : explicitHashKey.getBytes(StandardCharsets.UTF_8);
        int ehkHash = ehk == null ? 0 : hash(ehk);
        int pkIndex = partitionKeys.indexOf(partitionKey, pkHash);
        int ehkIndex = ehk == null ? -1 : explicitHashKeys.indexOf(ehk, ehkHash);
        int added = 0;
        if (pkIndex < 0) {
            added += CodedOutputStream.computeByteArraySize(PARTITION_KEY_TABLE, partitionKey);
        }
        if (ehk != null && ehkIndex < 0) {
            added += CodedOutputStream.computeByteArraySize(EXPLICIT_HASH_KEY_TABLE, ehk);
        }
        int newPkIndex = pkIndex >= 0 ? pkIndex : partitionKeys.count;
        int newEhkIndex = ehk == null ? -1 : ehkIndex >= 0 ? ehkIndex : explicitHashKeys.count;
        int body = CodedOutputStream.computeUInt64Size(RECORD_PARTITION_KEY_INDEX, newPkIndex)
            + (newEhkIndex < 0 ? 0 : CodedOutputStream.computeUInt64Size(RECORD_EXPLICIT_HASH_KEY_INDEX, newEhkIndex))
            + CodedOutputStream.computeByteArraySize(RECORD_DATA, data);
        int recordBytes = CodedOutputStream.computeTagSize(RECORDS) + CodedOutputStream.computeUInt32SizeNoTag(body) + body;
        added += recordBytes;
        if (count > 0 && MAGIC.length + protobufBytes + added + MD5_BYTES > Math.min(limitBytes, maxBytes)) {
            return false;
        }
        if (pkIndex < 0) {
            partitionKeys.add(partitionKey, pkHash, maxBytes);
        }
        if (ehk != null && ehkIndex < 0) {
            explicitHashKeys.add(ehk, ehkHash, maxBytes);
        }
        records.reserve(recordBytes, maxBytes);
        records.tag(RECORDS, WireFormat.WIRETYPE_LENGTH_DELIMITED);
        records.varint(body);
        records.tag(RECORD_PARTITION_KEY_INDEX, WireFormat.WIRETYPE_VARINT);
        records.varint(newPkIndex);
        if (newEhkIndex >= 0) {
            records.tag(RECORD_EXPLICIT_HASH_KEY_INDEX, WireFormat.WIRETYPE_VARINT);
            records.varint(newEhkIndex);
        }
        records.tag(RECORD_DATA, WireFormat.WIRETYPE_LENGTH_DELIMITED);
        records.varint(data.length);
        records.raw(data);
        count++;
        protobufBytes += added;
        return true;
    }

    /**
     * A key's hash for the tables' index, mixed by MurmurHash3's 32-bit finalizer: keys that differ
     * only in their last digits have String-style hashes that crowd a few slots.
     */
    private static int hash(byte[] key) {
        int hash = Arrays.hashCode(key);
        hash ^= hash >>> 16;
        hash *= 0x85ebca6b;
        hash ^= hash >>> 13;
        hash *= 0xc2b2ae35;
        return hash ^ (hash >>> 16);
    }

    public boolean isEmpty() {
        return count == 0;
    }

    /** The aggregate's size as the KPL counts it: magic, protobuf, MD5. */
    public int sizeBytes() {
        return MAGIC.length + protobufBytes + MD5_BYTES;
    }

    /** The aggregated record of everything added; then empty again for the next. */
    public byte[] build() {
        byte[] out = new byte[sizeBytes()];
        System.arraycopy(MAGIC, 0, out, 0, MAGIC.length);
        int at = MAGIC.length;
        for (Buffer part : List.of(partitionKeys.encoded, explicitHashKeys.encoded, records)) {
            System.arraycopy(part.bytes, 0, out, at, part.length);
            at += part.length;
        }
        if (at != MAGIC.length + protobufBytes) {
            throw new IllegalStateException("the aggregate's size was miscounted");
        }
        System.arraycopy(HashKeys.md5(out, MAGIC.length, protobufBytes), 0, out, MAGIC.length + protobufBytes, MD5_BYTES);
        clear();
        return out;
    }

    /**
     * Drops what was added, for the next aggregate. The buffers stay for it, unless a record too
     * large for any aggregate grew them past the limit.
     */
    public void clear() {
        partitionKeys.clear();
        explicitHashKeys.clear();
        records.length = 0;
        if (records.bytes.length > maxBytes) {
            records.release();
        }
        count = 0;
        protobufBytes = 0;
    }

    /** Clears it and gives its buffers back to the heap: the next aggregate grows new ones. */
    public void release() {
        clear();
        partitionKeys.release();
        explicitHashKeys.release();
        records.release();
    }

    /** The heap its buffers take, filled or not. */
    public int capacityBytes() {
        return records.bytes.length + partitionKeys.capacityBytes() + explicitHashKeys.capacityBytes();
    }
}
