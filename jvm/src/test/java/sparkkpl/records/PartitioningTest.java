package sparkkpl.records;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;
import sparkkpl.config.TestConfigs;
import sparkkpl.config.WriteOptions;

/** Where partition keys come from, for each partitioner and the columns the rows have. */
public class PartitioningTest {
    private static final RowLayout DATA_ONLY = RowLayout.of(new StructType().add("data", DataTypes.BinaryType), false);
    private static final RowLayout WITH_KEY = RowLayout.of(new StructType().add("data", DataTypes.BinaryType)
        .add("partitionKey", DataTypes.StringType), false);
    private static final InternalRow NO_KEY = new GenericInternalRow(new Object[] {new byte[0]});

    private static Partitioning resolve(RowLayout layout, String... options) {
        WriteOptions parsed = TestConfigs.read(options);
        return Partitioning.chosen(parsed.target().partitioner(), parsed.target().defaultPartition(), layout);
    }

    private static InternalRow keyed(String key) {
        return new GenericInternalRow(new Object[] {new byte[0], key == null ? null : UTF8String.fromString(key)});
    }

    private static String errorOf(RowLayout layout, String... options) {
        return assertThrows(IllegalArgumentException.class, () -> resolve(layout, options)).getMessage();
    }

    @Test
    public void aPartitionKeyColumnIsTheKeyAndDefaultPartitionStandsInForItsNulls() {
        Partitioning column = resolve(WITH_KEY, "defaultPartition", "fallback");

        assertEquals("user-1", column.key(keyed("user-1"), WITH_KEY, 7));
        assertEquals("fallback", column.key(keyed(null), WITH_KEY, 7));
        assertNull(resolve(WITH_KEY).key(keyed(null), WITH_KEY, 7));
        assertFalse("the user's keys need the shard map", column.choosesKeys());
    }

    @Test
    public void withoutAKeyColumnEachRecordDrawsARandomKey() {
        Partitioning random = resolve(DATA_ONLY);

        assertTrue(random.drawsRandomKeys());
        assertTrue(random.choosesKeys());
        assertNotEquals(random.key(NO_KEY, DATA_ONLY, 0), random.key(NO_KEY, DATA_ONLY, 0));
    }

    @Test
    public void fixedIsTheSparkPartitionAndDefaultPartitionAloneIsOneConstantKey() {
        Partitioning fixed = resolve(DATA_ONLY, "partitioner", "fixed");
        Partitioning constant = resolve(DATA_ONLY, "defaultPartition", "k");

        assertEquals("7", fixed.key(NO_KEY, DATA_ONLY, 7));
        assertFalse(fixed.drawsRandomKeys());
        assertEquals("k", constant.key(NO_KEY, DATA_ONLY, 7));
        assertTrue(constant.choosesKeys());
        assertFalse(constant.drawsRandomKeys());
    }

    @Test
    public void aPartitionerThatContradictsTheColumnsOrAnIgnoredOptionIsAnError() {
        assertTrue(errorOf(DATA_ONLY, "partitioner", "column").contains("partitioner=column needs a 'partitionKey'"));
        assertTrue(errorOf(WITH_KEY, "partitioner", "fixed").contains("partitioner=fixed makes its own keys"));
        assertTrue(errorOf(DATA_ONLY, "partitioner", "random", "defaultPartition", "k")
            .contains("'defaultPartition' would be ignored with partitioner=random"));
        assertTrue(errorOf(DATA_ONLY, "defaultPartition", "x".repeat(257))
            .contains("'defaultPartition' (spark.kpl.defaultPartition): partition key must have 1 to 256"));
    }
}
