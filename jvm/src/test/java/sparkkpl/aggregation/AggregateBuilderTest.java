package sparkkpl.aggregation;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.ByteString;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.Test;
import software.amazon.kinesis.producer.protobuf.Messages;
import software.amazon.kinesis.retrieval.AggregatorUtil;
import software.amazon.kinesis.retrieval.KinesisClientRecord;
import sparkkpl.kinesis.HashKeys;
import sparkkpl.kinesis.KinesisRecord;

/**
 * Aggregates read back by decoders this project did not write: the KCL's {@link AggregatorUtil}
 * (what a KCL consumer runs) and the KPL's own generated protobuf classes.
 */
public class AggregateBuilderTest {
    private static final BigInteger MAX_HASH_KEY = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE);

    /** A class, not a record: Gradle 4.4's test scanner cannot read record class files. */
    private static final class UserRecord {
        final String partitionKey;
        final String explicitHashKey;
        final byte[] data;

        UserRecord(String partitionKey, String explicitHashKey, byte[] data) {
            this.partitionKey = partitionKey;
            this.explicitHashKey = explicitHashKey;
            this.data = data;
        }
    }

    @Test
    public void everyRecordComesBackFromTheKclWithItsKeys() {
        List<UserRecord> records = List.of(
            record("user-1", null, "first"),
            record("user-2", null, ""),
            record("user-1", null, "same key again"),
            record("user-3", "170141183460469231731687303715884105728", "explicit hash key"),
            record("user-4", "170141183460469231731687303715884105728", "same explicit hash key"),
            record("ключ", null, "a non-ASCII key"));
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        records.forEach(r -> assertTrue(builder.tryAdd(utf8(r.partitionKey), r.explicitHashKey, r.data)));

        List<KinesisClientRecord> read = kclDeaggregate(builder.build(), BigInteger.ZERO, MAX_HASH_KEY);

        assertEquals(records.size(), read.size());
        for (int i = 0; i < records.size(); i++) {
            UserRecord sent = records.get(i);
            KinesisClientRecord got = read.get(i);
            assertTrue("sub-record " + i + " is marked as aggregated", got.aggregated());
            assertEquals(sent.partitionKey, got.partitionKey());
            assertEquals(sent.explicitHashKey, got.explicitHashKey());
            assertArrayEquals(sent.data, bytes(got.data()));
        }
    }

    @Test
    public void theReaderGivesBackEveryRecordWithItsKeysInOrder() {
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        builder.tryAdd(utf8("a"), null, utf8("1"));
        builder.tryAdd(utf8("b"), "42", utf8("2"));
        builder.tryAdd(utf8("a"), "42", utf8("3"));
        List<KinesisRecord> read = AggregateReader.records(new KinesisRecord("s", "x", "7", builder.build()));

        assertEquals(List.of("s:a:null:1", "s:b:42:2", "s:a:42:3"), read.stream().map(r -> r.stream() + ":"
            + r.partitionKey() + ":" + r.explicitHashKey() + ":" + new String(r.data(), StandardCharsets.UTF_8)).toList());
    }

    @Test
    public void keysAreWrittenOnceAndHashKeysOnlyWhereGiven() throws Exception {
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        builder.tryAdd(utf8("a"), null, utf8("1"));
        builder.tryAdd(utf8("a"), "5", utf8("2"));
        builder.tryAdd(utf8("b"), "5", utf8("3"));
        builder.tryAdd(utf8("a"), null, utf8("4"));

        Messages.AggregatedRecord parsed = kplParse(builder.build());

        assertEquals(List.of("a", "b"), parsed.getPartitionKeyTableList());
        assertEquals(List.of("5"), parsed.getExplicitHashKeyTableList());
        assertEquals(4, parsed.getRecordsCount());
        assertFalse(parsed.getRecords(0).hasExplicitHashKeyIndex());
        assertEquals(0, parsed.getRecords(2).getExplicitHashKeyIndex());
        assertEquals(1, parsed.getRecords(2).getPartitionKeyIndex());
        assertEquals(ByteString.copyFromUtf8("4"), parsed.getRecords(3).getData());
    }

    @Test
    public void anAggregateStopsBeforeTheRecordThatWouldTakeItOverTheLimitAsTheKplCountsIt() throws Exception {
        int limit = 1_000;
        AggregateBuilder builder = new AggregateBuilder(limit);
        int added = 0;
        while (builder.tryAdd(utf8("key-" + added), null, new byte[100])) {
            added++;
        }
        int size = builder.sizeBytes();
        byte[] aggregate = builder.build();

        assertEquals(size, aggregate.length);
        assertTrue(size + " bytes, at most " + limit, size <= limit);
        assertTrue("the next record of ~110 bytes did not fit: " + size, size > limit - 110);
        assertEquals("4 + protobuf + 16, as the KPL's accurate_size", 4 + kplParse(aggregate).getSerializedSize() + 16,
            aggregate.length);
        assertEquals(added, kplParse(aggregate).getRecordsCount());
        assertTrue("empty after build", builder.isEmpty());
    }

    @Test
    public void aRecordLargerThanTheLimitIsTakenAloneSoItCanTravelUnaggregated() {
        AggregateBuilder builder = new AggregateBuilder(100);
        assertTrue(builder.tryAdd(utf8("big"), null, new byte[500]));
        assertFalse(builder.tryAdd(utf8("small"), null, new byte[1]));

        builder.build();
        assertTrue(builder.tryAdd(utf8("small"), null, new byte[1]));
        assertFalse("a large record does not join a started aggregate", builder.tryAdd(utf8("big"), null, new byte[500]));
    }

    /**
     * Why the sink groups records per shard: the KCL checks every sub-record against the hash range of
     * the shard that stored the aggregate, and one outside it makes it drop the whole aggregate,
     * in-range sub-records included, without a word to the consumer.
     */
    @Test
    public void theKclDropsTheWholeAggregateWhenOneSubRecordIsOutsideTheShardsRange() {
        BigInteger half = BigInteger.ONE.shiftLeft(127);
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        builder.tryAdd(utf8("in"), "1", utf8("inside the lower half"));
        builder.tryAdd(utf8("in"), "2", utf8("inside too"));
        builder.tryAdd(utf8("out"), half.toString(), utf8("in the upper half"));
        byte[] aggregate = builder.build();

        assertEquals(0, kclDeaggregate(aggregate, BigInteger.ZERO, half.subtract(BigInteger.ONE)).size());
        assertEquals(3, kclDeaggregate(aggregate, BigInteger.ZERO, MAX_HASH_KEY).size());
    }

    @Test
    public void theEffectiveHashKeyIsTheKclsOwn() throws Exception {
        for (String key : new String[] {"a", "user-42", "ключ", "k".repeat(256)}) {
            assertEquals(key, kclEffectiveHashKey(key, null), HashKeys.effective(key, null).toBigInteger());
        }
        assertEquals(new BigInteger("12345"), HashKeys.effective("ignored", "12345").toBigInteger());
        assertEquals(kclEffectiveHashKey("ignored", "12345"), HashKeys.effective("ignored", "12345").toBigInteger());
    }

    private static BigInteger kclEffectiveHashKey(String partitionKey, String explicitHashKey) throws Exception {
        // Its computation is protected: reached from a subclass.
        return new AggregatorUtil() {
            BigInteger call() throws Exception {
                return effectiveHashKey(partitionKey, explicitHashKey);
            }
        }.call();
    }

    /** The KCL consumes the buffer it reads: every call gets a fresh record. */
    static List<KinesisClientRecord> kclDeaggregate(byte[] aggregate, BigInteger start, BigInteger end) {
        KinesisClientRecord stored = KinesisClientRecord.builder().data(ByteBuffer.wrap(aggregate.clone()))
            .partitionKey("a").sequenceNumber("1").build();
        return new AggregatorUtil().deaggregate(new ArrayList<>(List.of(stored)), start, end);
    }

    static Messages.AggregatedRecord kplParse(byte[] aggregate) throws Exception {
        assertArrayEquals(AggregateBuilder.MAGIC, java.util.Arrays.copyOf(aggregate, 4));
        byte[] protobuf = java.util.Arrays.copyOfRange(aggregate, 4, aggregate.length - 16);
        assertArrayEquals("MD5 trailer", HashKeys.md5(protobuf),
            java.util.Arrays.copyOfRange(aggregate, aggregate.length - 16, aggregate.length));
        return Messages.AggregatedRecord.parseFrom(protobuf);
    }

    private static UserRecord record(String partitionKey, String explicitHashKey, String data) {
        return new UserRecord(partitionKey, explicitHashKey, utf8(data));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
