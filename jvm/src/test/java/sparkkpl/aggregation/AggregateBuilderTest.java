package sparkkpl.aggregation;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.ByteString;
import java.math.BigInteger;
import java.lang.ref.WeakReference;
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
    public void anOpenAggregateKeepsNoneOfItsRecordsArrays() throws Exception {
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        List<WeakReference<byte[]>> given = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            byte[] key = utf8("key-" + i);
            byte[] data = utf8("row " + i);
            assertTrue(builder.tryAdd(key, null, data));
            given.add(new WeakReference<>(key));
            given.add(new WeakReference<>(data));
        }
        for (int i = 0; i < 20 && given.stream().anyMatch(ref -> ref.get() != null); i++) {
            System.gc();
            Thread.sleep(10);
        }

        assertEquals("the records' key and data arrays the open aggregate still holds", 0,
            given.stream().filter(ref -> ref.get() != null).count());
        Messages.AggregatedRecord parsed = kplParse(builder.build());
        assertEquals(100, parsed.getRecordsCount());
        assertEquals("key-99", parsed.getPartitionKeyTable((int) parsed.getRecords(99).getPartitionKeyIndex()));
        assertEquals(ByteString.copyFromUtf8("row 99"), parsed.getRecords(99).getData());
    }

    @Test
    public void thousandsOfRepeatedKeysAreEachWrittenOnceAndTheNextAggregateStartsEmpty() throws Exception {
        AggregateBuilder builder = new AggregateBuilder(1 << 20);
        for (int i = 0; i < 5_000; i++) {
            assertTrue(builder.tryAdd(utf8("k" + i % 1_500), i % 2 == 0 ? null : String.valueOf(i % 700), utf8("" + i)));
        }
        Messages.AggregatedRecord first = kplParse(builder.build());
        builder.tryAdd(utf8("other"), null, utf8("next"));
        Messages.AggregatedRecord next = kplParse(builder.build());

        assertEquals(1_500, first.getPartitionKeyTableCount());
        assertEquals(350, first.getExplicitHashKeyTableCount());
        for (int i = 0; i < 5_000; i++) {
            Messages.Record record = first.getRecords(i);
            assertEquals("k" + i % 1_500, first.getPartitionKeyTable((int) record.getPartitionKeyIndex()));
            if (i % 2 == 1) {
                assertEquals(String.valueOf(i % 700), first.getExplicitHashKeyTable((int) record.getExplicitHashKeyIndex()));
            }
            assertEquals(ByteString.copyFromUtf8("" + i), record.getData());
        }
        assertEquals(List.of("other"), next.getPartitionKeyTableList());
        assertEquals(0, next.getExplicitHashKeyTableCount());
        assertEquals(1, next.getRecordsCount());
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
