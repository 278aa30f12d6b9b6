package sparkkpl.records;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.UUID;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;
import sparkkpl.config.Format;

/** The Glue Schema Registry's header before each Avro row, as the registry's serializer writes it. */
public class RegistryHeaderTest {
    private static final UUID VERSION_ID = UUID.fromString("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
    private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType).add("name", DataTypes.StringType);
    private static final GenericInternalRow ROW = new GenericInternalRow(new Object[] {7L, UTF8String.fromString("ann")});

    private static byte[] serialized(PayloadFormat format) {
        return format.newSerializer(SCHEMA).serialize(ROW);
    }

    @Test
    public void theHeaderIsVersionCompressionAndTheSchemaVersionIdThenTheAvroRow() {
        PayloadFormat avro = new PayloadFormat(Format.AVRO, "UTC");
        byte[] data = serialized(avro.withRegistryHeader(new RegistryHeader(VERSION_ID, false)));

        ByteBuffer header = ByteBuffer.wrap(data, 0, RegistryHeader.SIZE);
        assertEquals(3, header.get());
        assertEquals(0, header.get());
        assertEquals(VERSION_ID, new UUID(header.getLong(), header.getLong()));
        assertArrayEquals(serialized(avro), Arrays.copyOfRange(data, RegistryHeader.SIZE, data.length));
    }

    @Test
    public void zlibCompressionDeflatesTheRowAfterTheHeader() throws DataFormatException {
        PayloadFormat avro = new PayloadFormat(Format.AVRO, "UTC");
        byte[] data = serialized(avro.withRegistryHeader(new RegistryHeader(VERSION_ID, true)));

        assertEquals(5, data[1]);
        Inflater inflater = new Inflater();
        inflater.setInput(data, RegistryHeader.SIZE, data.length - RegistryHeader.SIZE);
        byte[] row = new byte[256];
        int length = inflater.inflate(row);
        assertTrue(inflater.finished());
        assertArrayEquals(serialized(avro), Arrays.copyOf(row, length));
    }

    /** The registry client comes with an artifact of its own; without it the write names what to add. */
    @Test
    public void withoutTheRegistryArtifactTheWriteNamesTheOptionAndTheArtifact() {
        String message = assertThrows(IllegalArgumentException.class, SchemaRegistration::client).getMessage();
        assertTrue(message, message.startsWith("Option 'schemaRegistryName' (spark.kpl.schemaRegistryName) needs the "
            + "artifact io.github.sparkkpl:spark-kpl-glue, which is not on the classpath: add io.github.sparkkpl:spark-kpl-glue:"));
    }
}
