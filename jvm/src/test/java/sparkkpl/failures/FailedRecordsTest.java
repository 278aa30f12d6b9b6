package sparkkpl.failures;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.hadoop.conf.Configuration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.kinesis.KinesisRecord;

/** A task's undelivered records: the task fails naming the first, or each is counted and dead-lettered. */
public class FailedRecordsTest {
    private static final KinesisRecord RECORD = new KinesisRecord("s", "key", null, "d".getBytes(StandardCharsets.UTF_8));
    private static final FailedRecord EXPIRED = new FailedRecord(RECORD, 3, null, "Expired", "late");
    private static final FailedRecord BAD_KEY = new FailedRecord(RECORD, 4, "partitionKey", "InvalidPartitionKey", "too long");

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void withFailOnErrorARowMistakeIsAnIllegalArgumentNamingRowAndColumn() {
        FailedRecords failures = new FailedRecords(1, true, null);

        String message = assertThrows(IllegalArgumentException.class, () -> failures.handle(BAD_KEY)).getMessage();

        assertTrue(message, message.startsWith("Row 4 of Spark partition 1, column 'partitionKey': too long."));
        assertTrue(message, message.contains("RecordsNotDelivered"));
        assertTrue(message, message.contains("\"column\":\"partitionKey\""));
    }

    @Test
    public void withFailOnErrorAKinesisFailureIsAnIoErrorWithItsCode() {
        FailedRecords failures = new FailedRecords(1, true, null);

        String message = assertThrows(IOException.class, () -> failures.handle(EXPIRED)).getMessage();

        assertTrue(message, message.startsWith("Row 3 of Spark partition 1: Kinesis finally failed the record for "
            + "stream 's', partition key 'key': Expired: late"));
    }

    @Test
    public void otherwiseEachIsCountedAndKeptInTheDeadLetterFileOnceTheTaskCommits() throws Exception {
        DeadLetterFile file = new DeadLetterFile(new DeadLetterFile.Location(tmp.getRoot().toString(),
            new Configuration()), "task.json");
        FailedRecords failures = new FailedRecords(2, false, file);

        failures.handle(EXPIRED);
        failures.handle(BAD_KEY);
        failures.commit();

        assertEquals(2, failures.count());
        String lines = Files.readString(tmp.getRoot().toPath().resolve("task.json"));
        assertEquals(2, lines.lines().count());
        assertTrue(lines, lines.contains("\"errorCode\":\"Expired\"") && lines.contains("\"sparkPartition\":2"));
    }

    @Test
    public void anAbortedTaskLeavesNoDeadLetters() throws Exception {
        FailedRecords failures = new FailedRecords(0, false, new DeadLetterFile(
            new DeadLetterFile.Location(tmp.getRoot().toString(), new Configuration()), "task.json"));
        failures.handle(EXPIRED);

        failures.abort();

        try (var left = Files.list(tmp.getRoot().toPath())) {
            assertEquals(0, left.map(Path::getFileName).filter(name -> !name.toString().endsWith(".crc")).count());
        }
        assertEquals(1, failures.count());
    }
}
