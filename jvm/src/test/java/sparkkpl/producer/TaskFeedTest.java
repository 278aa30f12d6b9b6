package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.After;
import org.junit.Before;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.config.WriteConfig;
import sparkkpl.kinesis.KinesisRecord;

/**
 * The room a task's records hold under the queue limit, through a real KPL whose endpoint never
 * answers (records stay outstanding for the test's length): every reservation is either with the
 * KPL or given back, whatever happens to the batch.
 */
public class TaskFeedTest {
    /** Longer than the KPL's limit of 256 characters: it refuses the record when added. */
    private static final String REFUSED_KEY = "k".repeat(300);

    /** A folder per test: a distinct nativeDir makes a distinct producer, so no test sees another's records. */
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    private SharedProducer producer;

    /**
     * A new lane's budget is 1/1024 of queueLimit (DrainBudget), and nothing is ever acknowledged here: a batch
     * and more must fit into it.
     */
    private static final String QUEUE_LIMIT = String.valueOf(1024L * (TaskFeed.BATCH_RECORDS + 1));

    @Before
    public void startProducer() {
        producer = ProducerRegistry.acquire(WriteConfig.read(Map.of(), Map.ofEntries(
            Map.entry("streamName", "s"), Map.entry("Region", "us-east-1"), Map.entry("MetricsLevel", "none"),
            Map.entry("queueLimit", QUEUE_LIMIT),
            Map.entry("KinesisEndpoint", "127.0.0.1"), Map.entry("KinesisPort", "9"),
            Map.entry("CloudwatchEndpoint", "127.0.0.1"), Map.entry("CloudwatchPort", "9"),
            Map.entry("RecordTtl", "120000"), Map.entry("nativeDir", tmp.getRoot().toString()),
            Map.entry("shutdownFlushTimeoutMs", "1"))).options().producer());
    }

    @After
    public void releaseProducer() {
        ProducerRegistry.release(producer);
    }

    @Test
    public void aRefusalThatFailsTheTaskGivesBackTheRoomOfTheRecordsNotSent() throws Exception {
        TaskFeed feed = feed((record, row, error) -> {
            throw new IOException("refused row " + row);
        });
        addRows(feed, "key", "key", "key", REFUSED_KEY, "key", "key");

        IOException failure = assertThrows(IOException.class, feed::send);

        assertEquals("refused row 4", failure.getMessage());
        assertEquals("the three rows before it are with the KPL", 3, producer.usage().records());
        feed.discard();
        assertEquals(3, producer.usage().records());
    }

    @Test
    public void aRefusalHandledWithoutFailingSendsTheRest() throws Exception {
        List<Long> refusedRows = new ArrayList<>();
        TaskFeed feed = feed((record, row, error) -> refusedRows.add(row));
        addRows(feed, REFUSED_KEY, "key", "key", REFUSED_KEY, "key");

        feed.send();

        assertEquals(List.of(1L, 4L), refusedRows);
        assertEquals(3, producer.usage().records());
    }

    @Test
    public void discardGivesBackTheRoomOfPendingRecords() throws Exception {
        TaskFeed feed = feed((record, row, error) -> {
            throw error;
        });
        addRows(feed, "key", "key");
        assertEquals("reserved, not yet sent", 2, producer.usage().records());

        feed.discard();

        assertEquals(0, producer.usage().records());
    }

    @Test
    public void aFullBatchIsSentWithoutWaitingForTheTaskToEnd() throws Exception {
        TaskFeed feed = feed((record, row, error) -> {
            throw error;
        });
        String[] keys = new String[TaskFeed.BATCH_RECORDS + 1];
        Arrays.fill(keys, "key");
        addRows(feed, keys);

        assertEquals(TaskFeed.BATCH_RECORDS, (long) producer.stats().get("kplOutstandingRecords"));
        feed.discard();
        assertEquals(TaskFeed.BATCH_RECORDS, producer.usage().records());
    }

    /** A record whose stream does not place by key goes as it is, past a grouping that holds its records. */
    @Test
    public void aRecordAddedAloneSkipsTheGrouping() throws Exception {
        List<TaskRecord> held = new ArrayList<>();
        RecordGrouping holding = new RecordGrouping() {
            @Override
            public void add(TaskRecord record, Consumer<KplRecord> ready) {
                held.add(record);
            }

            @Override
            public void sealAll(Consumer<KplRecord> ready) {
            }

            @Override
            public void sealAged(Consumer<KplRecord> ready) {
            }

            @Override
            public void clear() {
                held.clear();
            }

            @Override
            public boolean keptWhereStored(KplRecord record, String storedIn, boolean streamWentMissing) {
                return true;
            }
        };
        TaskFeed feed = new TaskFeed(producer, new TaskAcks(), new TaskQueueStats(), 1000, (record, row, error) -> {
            throw error;
        }, holding, 60_000);
        addRows(feed, "key", "key");

        feed.addAlone(new KinesisRecord("s", "key", null, "alone".getBytes(StandardCharsets.UTF_8)), 3);

        assertEquals("the grouping holds the rows added to it", 2, held.size());
        assertEquals("the row added alone holds room of its own", 1, producer.usage().records());
        feed.discard();
    }

    /** Looks for aged records once a minute: none comes during a test, however slow the machine. */
    private TaskFeed feed(TaskFeed.RefusalHandler onRefused) {
        return new TaskFeed(producer, new TaskAcks(), new TaskQueueStats(), 1000, onRefused, RecordGrouping.ONE_BY_ONE,
            60_000);
    }

    private static void addRows(TaskFeed feed, String... keys) throws Exception {
        for (int i = 0; i < keys.length; i++) {
            feed.add(new KinesisRecord("s", keys[i], null, ("row-" + i).getBytes(StandardCharsets.UTF_8)), i + 1);
        }
    }
}
