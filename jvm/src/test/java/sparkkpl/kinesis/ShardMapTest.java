package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;

import java.math.BigInteger;
import java.util.List;
import org.junit.Test;

public class ShardMapTest {
    private static final BigInteger MAX = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE);

    @Test
    public void aKeyRoutesToTheShardWhoseRangeHoldsItEndsIncluded() {
        BigInteger half = BigInteger.ONE.shiftLeft(127);
        ShardMap map = new ShardMap(List.of(
            new ShardMap.Shard("shardId-000000000002", half, MAX),
            new ShardMap.Shard("shardId-000000000001", BigInteger.ZERO, half.subtract(BigInteger.ONE))));

        assertEquals("shardId-000000000001", map.shardFor(HashKey.of(BigInteger.ZERO)).id());
        assertEquals("shardId-000000000001", map.shardFor(HashKey.of(half.subtract(BigInteger.ONE))).id());
        assertEquals("shardId-000000000002", map.shardFor(HashKey.of(half)).id());
        assertEquals("shardId-000000000002", map.shardFor(HashKey.of(MAX)).id());
    }

    @Test
    public void aKeyInAGapHasNoShard() {
        ShardMap map = new ShardMap(List.of(new ShardMap.Shard("s-1", BigInteger.TEN, MAX)));
        assertNull(map.shardFor(HashKey.of(BigInteger.ONE)));
    }

    @Test
    public void overlappingRangesAreNotAMapOfOpenShards() {
        assertThrows(IllegalArgumentException.class, () -> new ShardMap(List.of(
            new ShardMap.Shard("parent", BigInteger.ZERO, MAX),
            new ShardMap.Shard("child", BigInteger.TEN, MAX))));
        assertThrows(IllegalArgumentException.class, () -> new ShardMap(List.of()));
    }
}
