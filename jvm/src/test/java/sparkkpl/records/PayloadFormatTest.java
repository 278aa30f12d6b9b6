package sparkkpl.records;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;
import sparkkpl.config.Format;

/** How a record's data is made from a row. */
public class PayloadFormatTest {
    @Test
    public void rawTakesTheDataColumnAndTheOthersSerializeTheRow() {
        assertFalse(new PayloadFormat(Format.RAW, "UTC").serializesRow());
        assertTrue(new PayloadFormat(Format.JSON, "UTC").serializesRow());
        assertTrue(new PayloadFormat(Format.AVRO, "UTC").serializesRow());
    }

    @Test
    public void jsonIsWhatToJsonWritesOneSerializerForManyRows() {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("name", DataTypes.StringType);
        PayloadFormat.Serializer json = new PayloadFormat(Format.JSON, "UTC").newSerializer(schema);

        byte[] first = json.serialize(new GenericInternalRow(new Object[] {1, UTF8String.fromString("é")}));
        byte[] second = json.serialize(new GenericInternalRow(new Object[] {2, null}));

        assertEquals("{\"id\":1,\"name\":\"é\"}", new String(first, StandardCharsets.UTF_8));
        assertEquals("a null field is left out, as to_json does", "{\"id\":2}", new String(second, StandardCharsets.UTF_8));
    }
}
