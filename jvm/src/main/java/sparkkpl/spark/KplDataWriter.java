package sparkkpl.spark;

import java.io.IOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.producer.ProducerRegistry;
import sparkkpl.producer.RecordRules;
import sparkkpl.producer.SharedProducer;
import sparkkpl.producer.TaskAcks;
import sparkkpl.producer.TaskQueueStats;

/**
 * Writes one Spark partition. It commits only once Kinesis has acknowledged every record this
 * task added, and fails naming the stream and Kinesis's error if any record finally failed.
 */
final class KplDataWriter implements DataWriter<InternalRow> {
    private final int partitionId;
    private final WriteConfig config;
    private final RowLayout layout;
    private final String defaultStream;
    private final long timeoutMs;
    private final TaskAcks acks = new TaskAcks();
    private final TaskQueueStats queueStats = new TaskQueueStats();
    /** Taken on the first row, so an empty partition starts no daemon. */
    private SharedProducer producer;
    private long rowNumber;
    private boolean committed;

    KplDataWriter(int partitionId, WriteConfig config, RowLayout layout) {
        this.partitionId = partitionId;
        this.config = config;
        this.layout = layout;
        this.defaultStream = config.get(SinkOption.STREAM_NAME).orElse(null);
        this.timeoutMs = config.getLong(SinkOption.ACK_TIMEOUT_MS);
    }

    @Override
    public void write(InternalRow row) throws IOException {
        rowNumber++;
        byte[] data = layout.data(row);
        if (data == null) {
            throw badRow(RowLayout.DATA, "data is null; filter such rows out or give them a payload", null);
        }
        String stream = layout.streamName(row);
        if (stream == null) {
            stream = defaultStream;
        }
        if (stream == null) {
            throw badRow(RowLayout.STREAM_NAME, "no target stream: set the option streamName or give the row a "
                + "streamName value", null);
        }
        String partitionKey = partitionKey(row);
        String explicitHashKey = layout.explicitHashKey(row);
        if (explicitHashKey != null) {
            check(() -> RecordRules.checkExplicitHashKey(explicitHashKey), RowLayout.EXPLICIT_HASH_KEY);
        }
        if (producer == null) {
            producer = ProducerRegistry.acquire(config);
        }
        try {
            producer.add(stream, partitionKey, explicitHashKey, data, acks, queueStats, timeoutMs);
        } catch (IllegalArgumentException e) {
            throw badRow(RowLayout.DATA, "the KPL refused the record for stream '" + stream + "': " + e.getMessage(), e);
        } catch (TimeoutException e) {
            throw new IOException("Writing to Kinesis stream '" + stream + "': " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while waiting for room in the KPL queue", e);
        }
    }

    private String partitionKey(InternalRow row) {
        if (!layout.hasPartitionKey()) {
            return randomPartitionKey();
        }
        String key = layout.partitionKey(row);
        if (key == null) {
            throw badRow(RowLayout.PARTITION_KEY, "partition key is null; coalesce it or drop the column to spread "
                + "records randomly", null);
        }
        check(() -> RecordRules.checkPartitionKey(key), RowLayout.PARTITION_KEY);
        return key;
    }

    /** 128 random bits: spreads records evenly over shards, as Flink's RandomKinesisPartitioner does. */
    private static String randomPartitionKey() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    }

    private void check(Runnable rule, String column) {
        try {
            rule.run();
        } catch (IllegalArgumentException e) {
            throw badRow(column, e.getMessage(), e);
        }
    }

    private IllegalArgumentException badRow(String column, String problem, Throwable cause) {
        return new IllegalArgumentException("Row " + rowNumber + " of Spark partition " + partitionId + ", column '"
            + column + "': " + problem + ". Rows before it were accepted and are sent; this task fails.", cause);
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (producer != null) {
            try {
                acks.awaitAll(producer::flush, timeoutMs);
            } catch (TimeoutException e) {
                throw new IOException("Kinesis write of Spark partition " + partitionId + ": " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("Interrupted while waiting for Kinesis to acknowledge this task's records", e);
            }
        }
        if (acks.failed() > 0) {
            throw new IOException("Kinesis finally failed " + acks.failed() + " of " + (acks.failed() + acks.succeeded())
                + " records of Spark partition " + partitionId + "; first: " + acks.firstFailure());
        }
        committed = true;
        return WriteSummary.ofTask(acks, queueStats, true);
    }

    /** Polled by Spark while the task runs and at its end, for the Spark UI. */
    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return WriteSummary.ofTask(acks, queueStats, committed).taskMetrics();
    }

    /** Records already added cannot be recalled from the KPL; they may still reach the stream. */
    @Override
    public void abort() {}

    @Override
    public void close() {
        if (producer != null) {
            ProducerRegistry.release(producer);
            producer = null;
        }
    }
}
