package sparkkpl.records;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;

/** Where a record's parts sit in a row, and the schema mistakes the sink names. */
public class RowLayoutTest {
    private static UTF8String text(String value) {
        return UTF8String.fromString(value);
    }

    private static String errorOf(StructType schema, boolean serializesRow) {
        return assertThrows(IllegalArgumentException.class, () -> RowLayout.of(schema, serializesRow)).getMessage();
    }

    @Test
    public void columnsMatchInAnyCaseAndStringDataIsSentAsUtf8() {
        StructType schema = new StructType().add("STREAMNAME", DataTypes.StringType).add("Data", DataTypes.StringType)
            .add("partitionkey", DataTypes.StringType).add("explicitHashKey", DataTypes.StringType);
        RowLayout layout = RowLayout.of(schema, false);
        InternalRow row = new GenericInternalRow(new Object[] {text("s"), text("é"), text("k"), null});

        assertArrayEquals("é".getBytes(StandardCharsets.UTF_8), layout.data(row));
        assertEquals("s", layout.streamName(row));
        assertEquals("k", layout.partitionKey(row));
        assertNull(layout.explicitHashKey(row));
        assertTrue(layout.hasPartitionKey());
        assertNull("no serializing format", layout.payloadSchema());
    }

    @Test
    public void nullBinaryDataIsNullAndAbsentColumnsAreNull() {
        RowLayout layout = RowLayout.of(new StructType().add("data", DataTypes.BinaryType), false);
        InternalRow row = new GenericInternalRow(new Object[] {null});

        assertTrue(layout.dataIsNull(row));
        assertNull(layout.data(row));
        assertNull(layout.streamName(row));
        assertFalse(layout.hasPartitionKey());
    }

    @Test
    public void aSerializingFormatTakesEveryColumnButTheKeysAndStream() {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("partitionKey", DataTypes.StringType)
            .add("name", DataTypes.StringType);
        RowLayout layout = RowLayout.of(schema, true);
        InternalRow row = new GenericInternalRow(new Object[] {7, text("k"), text("n")});

        assertEquals(new StructType().add("id", DataTypes.IntegerType).add("name", DataTypes.StringType),
            layout.payloadSchema());
        InternalRow payload = layout.payload(row);
        assertEquals(7, payload.getInt(0));
        assertEquals("n", payload.getUTF8String(1).toString());
        assertFalse("no data column to be null", layout.dataIsNull(row));
    }

    @Test
    public void schemaMistakesNameTheColumn() {
        assertTrue(errorOf(new StructType().add("data", DataTypes.BinaryType).add("extra", DataTypes.StringType), false)
            .contains("does not know column 'extra'"));
        assertTrue(errorOf(new StructType().add("data", DataTypes.IntegerType), false)
            .contains("Column 'data' must be binary or string"));
        assertTrue(errorOf(new StructType().add("data", DataTypes.BinaryType).add("partitionKey", DataTypes.LongType),
            false).contains("Column 'partitionKey' must be string"));
        assertTrue(errorOf(new StructType().add("partitionKey", DataTypes.StringType), false)
            .contains("needs a column 'data'"));
        assertTrue(errorOf(new StructType().add("partitionKey", DataTypes.StringType), true)
            .contains("no column to serialize"));
    }
}
