package sparkkpl.records;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.Test;
import sparkkpl.config.Format;
import sparkkpl.config.TestConfigs;
import sparkkpl.config.WriteOptions;
import sparkkpl.failures.FailedRecord;
import sparkkpl.failures.RowRejected;
import sparkkpl.kinesis.KinesisRecord;

/** A row (data, partitionKey, explicitHashKey, streamName) made into its record, or rejected naming the column. */
public class RecordAssemblerTest {
    private static final RowLayout LAYOUT = RowLayout.of(new StructType().add("data", DataTypes.StringType)
        .add("partitionKey", DataTypes.StringType).add("explicitHashKey", DataTypes.StringType)
        .add("streamName", DataTypes.StringType), false);

    private static RecordAssembler assembler(RecordIdHeader.Task recordIds, String... options) {
        WriteOptions parsed = TestConfigs.read(options);
        return new RecordAssembler(parsed, LAYOUT, new PayloadFormat(Format.RAW, "UTC"),
            Partitioning.chosen(parsed.target().partitioner(), parsed.target().defaultPartition(), LAYOUT), recordIds, 0, java.util.Map.of());
    }

    /** A task's first assembler with record ids: the same row always gets the same id. */
    private static RecordAssembler assemblerWithIds() {
        return assembler(new RecordIdHeader("write").forTask(0, 0));
    }

    private static InternalRow row(String... values) {
        return new GenericInternalRow(Arrays.stream(values).map(v -> v == null ? null : UTF8String.fromString(v))
            .toArray());
    }

    private static FailedRecord rejected(RecordAssembler assembler, InternalRow row) {
        return assertThrows(RowRejected.class, () -> assembler.assemble(row, 9)).failure();
    }

    @Test
    public void aRowsStreamWinsOverTheDefaultStream() throws Exception {
        RecordAssembler assembler = assembler(null, "streamName", "default");

        KinesisRecord own = assembler.assemble(row("d", "k", "5", "own"), 1);
        KinesisRecord defaulted = assembler.assemble(row("d", "k", null, null), 2);

        assertEquals("own", own.stream());
        assertEquals("5", own.explicitHashKey());
        assertArrayEquals("d".getBytes(StandardCharsets.UTF_8), own.data());
        assertEquals("default", defaulted.stream());
    }

    @Test
    public void eachImpossibleRowIsRejectedNamingItsColumnAndRow() {
        RecordAssembler assembler = assembler(null);

        FailedRecord noStream = rejected(assembler, row("d", "k", null, null));
        assertEquals("NoStream", noStream.errorCode());
        assertEquals("streamName", noStream.column());
        assertEquals(9, noStream.rowNumber());
        assertEquals("NullData", rejected(assembler, row(null, "k", null, "s")).errorCode());
        assertEquals("NullPartitionKey", rejected(assembler, row("d", null, null, "s")).errorCode());
        assertEquals("InvalidPartitionKey", rejected(assembler, row("d", "", null, "s")).errorCode());
        assertEquals("InvalidExplicitHashKey", rejected(assembler, row("d", "k", "-1", "s")).errorCode());
    }

    @Test
    public void aPartitionKeyIsCountedInUtf16UnitsAsTheKplCountsIt() throws Exception {
        RecordAssembler assembler = assembler(null);
        String emoji = "\uD83D\uDE00"; // one character, two UTF-16 units

        assembler.assemble(row("d", emoji.repeat(128), null, "s"), 1);
        FailedRecord tooLong = rejected(assembler, row("d", emoji.repeat(200), null, "s"));

        assertEquals("InvalidPartitionKey", tooLong.errorCode());
        assertEquals("partitionKey", tooLong.column());
        assertTrue(tooLong.errorMessage(), tooLong.errorMessage().contains("has 400 (200 characters)"));
    }

    @Test
    public void anExplicitHashKeyIsSentInKinesissCanonicalFormAndNamedSoInTheRecordId() throws Exception {
        KinesisRecord signed = assemblerWithIds().assemble(row("d", "k", "+5", "s"), 1);
        KinesisRecord padded = assemblerWithIds().assemble(row("d", "k", "007", "s"), 1);

        assertEquals("5", signed.explicitHashKey());
        assertEquals("7", padded.explicitHashKey());
        assertArrayEquals(assemblerWithIds().assemble(row("d", "k", "5", "s"), 1).data(), signed.data());
        assertEquals("InvalidExplicitHashKey", rejected(assembler(null), row("d", "k", " 5", "s")).errorCode());
    }

    @Test
    public void aRecordOverMaxRecordBytesCountingItsKeyIsRejected() throws Exception {
        RecordAssembler assembler = assembler(null, "maxRecordBytes", "100");

        assembler.assemble(row("x".repeat(99), "k", null, "s"), 1);
        FailedRecord tooLarge = rejected(assembler, row("x".repeat(100), "k", null, "s"));

        assertEquals("RecordTooLarge", tooLarge.errorCode());
        assertEquals("data", tooLarge.column());
    }

    @Test
    public void nullDataIsSkippedWhenAskedTo() throws Exception {
        assertNull(assembler(null, "nullData", "skip").assemble(row(null, "k", null, "s"), 1));
    }

    @Test
    public void withRecordIdsTheDataStartsWithTheHeader() throws Exception {
        RecordIdHeader.Task ids = new RecordIdHeader("write").forTask(0, 0);

        byte[] data = assembler(ids).assemble(row("d", "k", null, "s"), 1).data();

        assertEquals(RecordIdHeader.SIZE + 1, data.length);
        assertArrayEquals(RecordIdHeader.MAGIC, Arrays.copyOf(data, RecordIdHeader.MAGIC.length));
    }
}
