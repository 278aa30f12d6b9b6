package sparkkpl.spark;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.junit.Test;

/** A table serves a streaming query's micro-batches (each a new write Spark asks for) with one resolution. */
public class KplTableTest {
    private static final StructType ROWS = new StructType().add("data", DataTypes.StringType);
    private static SparkSession spark;

    @BeforeClass
    public static void startSpark() {
        spark = SparkSession.builder().master("local[1]").appName("KplTableTest").config("spark.ui.enabled", "false")
            .getOrCreate();
    }

    @AfterClass
    public static void stopSpark() {
        spark.stop();
    }

    /** What Spark tells the table of a write: its id (a streaming query's own, at every micro-batch), rows and options. */
    private static LogicalWriteInfo info(String queryId, Map<String, String> options) {
        return new LogicalWriteInfo() {
            @Override
            public CaseInsensitiveStringMap options() {
                return new CaseInsensitiveStringMap(options);
            }

            @Override
            public String queryId() {
                return queryId;
            }

            @Override
            public StructType schema() {
                return ROWS;
            }
        };
    }

    @Test
    public void aQuerysTwentyMicroBatchesResolveItsWriteAndMakeItsDeadLetterFolderOnce() throws IOException {
        Path deadLetters = Files.createTempDirectory("kpl-table-test").resolve("dead-letters");
        Map<String, String> options = Map.of("Region", "us-east-1", "streamName", "s", "failOnError", "false",
            "deadLetterPath", deadLetters.toString(),
            "checkpointLocation", deadLetters.getParent().resolve("checkpoint").toString());
        KplTable table = new KplTable(ROWS, Map.of());
        table.newWriteBuilder(info("query", options)).build().toStreaming();
        Files.delete(deadLetters);

        for (int batch = 1; batch < 20; batch++) {
            table.newWriteBuilder(info("query", options)).build().toStreaming();
        }

        assertFalse("made at the first micro-batch only", Files.exists(deadLetters));
        table.newWriteBuilder(info("another write", options)).build();
        assertTrue("made again for another write", Files.exists(deadLetters));
    }
}
