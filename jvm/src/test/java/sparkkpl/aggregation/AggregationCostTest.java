package sparkkpl.aggregation;

import static org.junit.Assert.assertTrue;

import com.google.protobuf.ByteString;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.Test;
import software.amazon.kinesis.producer.protobuf.Messages;
import sparkkpl.kinesis.HashKeys;
import sparkkpl.kinesis.ShardMap;

/**
 * What building aggregates costs per 100-byte user record, printed for docs/aggregation.md (no
 * timing is asserted: the machine is shared). Measured: the sink's writer with the per-record work
 * around it (effective hash key, shard lookup), and the KPL's generated builders doing the same
 * encoding, the alternative the writer was chosen over.
 */
public class AggregationCostTest {
    private static final int RECORDS = 1_000_000;
    private static final int KEYS = 10_000;
    private static final ShardMap SIXTEEN_SHARDS = evenShards(16);

    @Test
    public void costPerHundredByteRecord() {
        String[] keys = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = "user-" + i;
        }
        byte[] data = new byte[100];
        for (int round = 0; round < 3; round++) {
            long writer = timeNanos(() -> viaWriter(keys, data));
            long builders = timeNanos(() -> viaGeneratedBuilders(keys, data));
            System.out.printf("aggregation cost per 100 B record (round %d): writer + hash key + shard lookup "
                + "%.3f us; generated builders + hash key + shard lookup %.3f us%n",
                round + 1, writer / 1e3 / RECORDS, builders / 1e3 / RECORDS);
        }
    }

    private static long viaWriter(String[] keys, byte[] data) {
        AggregateBuilder builder = new AggregateBuilder(AggregateBuilder.DEFAULT_MAX_BYTES);
        long bytes = 0;
        for (int i = 0; i < RECORDS; i++) {
            byte[] key = keys[i % KEYS].getBytes(StandardCharsets.UTF_8);
            SIXTEEN_SHARDS.shardFor(HashKeys.effective(key, null));
            if (!builder.tryAdd(key, null, data)) {
                bytes += builder.build().length;
                builder.tryAdd(key, null, data);
            }
        }
        return bytes + builder.build().length;
    }

    private static long viaGeneratedBuilders(String[] keys, byte[] data) {
        long bytes = 0;
        Messages.AggregatedRecord.Builder aggregate = Messages.AggregatedRecord.newBuilder();
        java.util.Map<String, Integer> keyIndex = new java.util.HashMap<>();
        for (int i = 0; i < RECORDS; i++) {
            String key = keys[i % KEYS];
            SIXTEEN_SHARDS.shardFor(HashKeys.effective(key, null));
            Integer index = keyIndex.get(key);
            if (index == null) {
                index = keyIndex.size();
                keyIndex.put(key, index);
                aggregate.addPartitionKeyTable(key);
            }
            aggregate.addRecords(Messages.Record.newBuilder().setPartitionKeyIndex(index).setData(ByteString.copyFrom(data)));
            if (aggregate.getRecordsCount() == 400) {
                byte[] protobuf = aggregate.build().toByteArray();
                bytes += 20 + protobuf.length + HashKeys.md5(protobuf).length;
                aggregate = Messages.AggregatedRecord.newBuilder();
                keyIndex.clear();
            }
        }
        return bytes;
    }

    private static long timeNanos(java.util.function.LongSupplier work) {
        long start = System.nanoTime();
        assertTrue(work.getAsLong() > 0);
        return System.nanoTime() - start;
    }

    static ShardMap evenShards(int count) {
        BigInteger width = BigInteger.ONE.shiftLeft(128).divide(BigInteger.valueOf(count));
        List<ShardMap.Shard> shards = new java.util.ArrayList<>();
        for (int i = 0; i < count; i++) {
            BigInteger start = width.multiply(BigInteger.valueOf(i));
            BigInteger end = i == count - 1 ? BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE)
                : start.add(width).subtract(BigInteger.ONE);
            shards.add(new ShardMap.Shard(String.format("shardId-%012d", i), start, end));
        }
        return new ShardMap(shards);
    }
}
