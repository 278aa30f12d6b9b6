package sparkkpl.records;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.Arrays;
import java.util.Map;
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

/** A row (data, partitionKey, streamName, streamArn) naming its stream by ARN, in the write's region and account. */
public class RowStreamArnTest {
    private static final String ACCOUNT = "123456789012";
    private static final RowLayout LAYOUT = RowLayout.of(new StructType().add("data", DataTypes.StringType)
        .add("partitionKey", DataTypes.StringType).add("streamName", DataTypes.StringType)
        .add("streamArn", DataTypes.StringType), false).withArnScope("us-east-1", ACCOUNT);

    private static RecordAssembler assembler() {
        WriteOptions parsed = TestConfigs.read("streamName", "default");
        return new RecordAssembler(parsed, LAYOUT, new PayloadFormat(Format.RAW, "UTC"),
            Partitioning.chosen(parsed.target().partitioner(), parsed.target().defaultPartition(), LAYOUT), null, 0,
            Map.of());
    }

    private static InternalRow row(String... values) {
        return new GenericInternalRow(Arrays.stream(values).map(v -> v == null ? null : UTF8String.fromString(v))
            .toArray());
    }

    private static FailedRecord rejected(InternalRow row) {
        FailedRecord failure = assertThrows(RowRejected.class, () -> assembler().assemble(row, 4)).failure();
        assertEquals("streamArn", failure.column());
        assertEquals("InvalidStreamArn", failure.errorCode());
        return failure;
    }

    @Test
    public void aRowsArnGivesItsStreamName() throws Exception {
        String arn = "arn:aws:kinesis:us-east-1:" + ACCOUNT + ":stream/orders";
        assertEquals("orders", assembler().assemble(row("d", "k", null, arn), 1).stream());
        assertEquals("orders", assembler().assemble(row("d", "k", "orders", arn), 2).stream());
        assertEquals("default", assembler().assemble(row("d", "k", null, null), 3).stream());
    }

    @Test
    public void anArnThatCannotBeWrittenRejectsTheRowSayingWhy() {
        assertTrue(rejected(row("d", "k", null, "orders")).errorMessage().contains("arn:aws:kinesis:REGION:ACCOUNT"));
        assertTrue(rejected(row("d", "k", null, "arn:aws:kinesis:eu-west-1:" + ACCOUNT + ":stream/o")).errorMessage()
            .contains("in region eu-west-1, and the write's KPL writes in us-east-1"));
        String otherAccount = rejected(row("d", "k", null, "arn:aws:kinesis:us-east-1:210987654321:stream/o")).errorMessage();
        assertTrue(otherAccount, otherAccount.contains("of account 210987654321") && otherAccount.contains("awsRoleArn"));
        assertTrue(rejected(row("d", "k", "other", "arn:aws:kinesis:us-east-1:" + ACCOUNT + ":stream/o")).errorMessage()
            .contains("streamName 'other' and streamArn"));
    }
}
