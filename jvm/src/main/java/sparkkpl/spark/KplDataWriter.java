package sparkkpl.spark;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskKilledException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.WriteOptions;
import sparkkpl.failures.FailedRecord;
import sparkkpl.failures.FailedRecords;
import sparkkpl.failures.RowRejected;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.RowStreams;
import sparkkpl.kinesis.ShardMaps;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.metrics.ExecutorTotals;
import sparkkpl.metrics.WriteSummary;
import sparkkpl.producer.ProducerRegistry;
import sparkkpl.producer.RecordGrouping;
import sparkkpl.producer.SharedProducer;
import sparkkpl.producer.TaskAcks;
import sparkkpl.producer.TaskFeed;
import sparkkpl.producer.TaskQueueStats;
import sparkkpl.records.RecordAssembler;
import sparkkpl.records.RowLayout;

/**
 * Writes one Spark partition. It commits only once Kinesis has acknowledged or finally failed every
 * record this task added; what failed is handled by {@link FailedRecords} (the task fails, or the
 * record is counted and dead-lettered).
 */
final class KplDataWriter implements DataWriter<InternalRow> {
    private static final Logger LOG = LoggerFactory.getLogger(KplDataWriter.class);
    private final int partitionId;
    private final WriteOptions options;
    private final RecordAssembler assembler;
    private final FailedRecords failures;
    private final long timeoutMs;
    /** The task's grouping of records, made on its producer's shard maps once it has one. */
    private final Function<ShardMaps, RecordGrouping> groupingFor;
    /** What the task knows of each stream: its placement, its incarnation (described on its producer's maps). */
    private final RowStreams rowStreams;
    /** The producer of rows naming a stream that places records itself (AUTO), or null: the write's own. */
    private final ProducerSpec autoStreamsSpec;
    private final TaskAcks acks;
    private final TaskQueueStats queueStats = new TaskQueueStats();
    /** Null off a Spark task (unit tests). */
    private final TaskContext task = TaskContext.get();
    /** Taken on the first row, so an empty partition starts no daemon. */
    private SharedProducer producer;
    private TaskFeed feed;
    /** Taken on the first row naming an AUTO stream, when that has a producer of its own. */
    private SharedProducer autoStreamsProducer;
    private TaskFeed autoStreamsFeed;
    private long rowNumber;
    private long skipped;
    /** Rows that went one per Kinesis record, as their stream places records itself. */
    private long unaggregated;
    private boolean committed;
    /** When the first row came, for the commit's timings (debug log). */
    private long firstRowAt;
    /** How long the task took to get its producer. */
    private long acquireNanos;

    KplDataWriter(int partitionId, WriteOptions options, RecordAssembler assembler, FailedRecords failures,
                  Function<ShardMaps, RecordGrouping> groupingFor, RowStreams rowStreams,
                  ProducerSpec autoStreamsSpec) {
        this.partitionId = partitionId;
        this.groupingFor = groupingFor;
        this.rowStreams = rowStreams;
        this.autoStreamsSpec = autoStreamsSpec;
        this.options = options;
        this.assembler = assembler;
        this.failures = failures;
        this.timeoutMs = options.ackTimeoutMs();
        this.acks = new TaskAcks(options.producer().recordAnswerTimeoutMs());
    }

    /** Every failure of the task leaves it tagged for Python ({@link SinkTaskFailedException}). */
    @Override
    public void write(InternalRow row) throws IOException {
        try {
            writeRow(row);
        } catch (IOException | RuntimeException e) {
            throw SinkTaskFailedException.named(e, partitionId, acks);
        }
    }

    private void writeRow(InternalRow row) throws IOException {
        // Spark's interrupt alone does not stop this loop: while the queue has room nothing here
        // blocks, and an input such as a cached table does not check for kills itself.
        if (task != null && task.isInterrupted()) {
            throw new TaskKilledException("cancelled before row " + (rowNumber + 1) + " of Spark partition "
                + partitionId + "; the rows before it may still reach Kinesis");
        }
        rowNumber++;
        handleKinesisFailures();
        KinesisRecord record;
        try {
            record = assembler.assemble(row, rowNumber);
        } catch (RowRejected e) {
            failures.handle(e.failure());
            return;
        }
        if (record == null) {
            skipped++;
            return;
        }
        if (producer == null) {
            firstRowAt = System.nanoTime();
            startFeed();
            acquireNanos = System.nanoTime() - firstRowAt;
        }
        RowStreams.Placement placement = rowStreams.placement(record.stream());
        StreamDescription met = rowStreams.newlyMet();
        if (met != null && !producer.admits(met)) {
            replaceOutlivedProducer(met);
        }
        if (placement == RowStreams.Placement.BY_KINESIS) {
            unaggregated++;
        }
        try { // not through inFeed: its message and step would be two objects per row
            feed.resendMisplaced();
            if (placement == RowStreams.Placement.BY_KEY) {
                feed.add(record, rowNumber);
            } else if (placement == RowStreams.Placement.BY_KINESIS && autoStreamsSpec != null) {
                autoStreamsFeed().add(record, rowNumber);
            } else {
                feed.addAlone(record, rowNumber);
            }
        } catch (TimeoutException | InterruptedException e) {
            throw feedFailed("writing to Kinesis stream '" + record.stream() + "'", e);
        }
    }

    /** Takes the JVM's producer for the streams the task knows of, and feeds it from now on. */
    private void startFeed() {
        producer = ProducerRegistry.acquire(options.producer(), rowStreams.known());
        rowStreams.use(producer.shardMaps());
        feed = new TaskFeed(producer, acks, queueStats, timeoutMs, this::refusedByKpl,
            groupingFor.apply(producer.shardMaps()), options.producer().recordMaxBufferedTimeMs());
    }

    /**
     * A stream rows name was created again since the task's producer's daemon met it: that daemon would
     * aggregate or predict shards by the old stream's map. What the task holds goes through that producer
     * (none of it is for this stream) and is waited for; then the task takes the producer the pool now
     * makes for every task, and the old one closes, drained, once its last holder releases it.
     */
    private void replaceOutlivedProducer(StreamDescription stream) throws IOException {
        inFeed("delivering its records before it leaves a KPL producer that met an earlier stream named '"
            + stream.stream() + "'", () -> TaskFeed.finish(feeds(), timeoutMs));
        ProducerRegistry.release(producer);
        producer = null;
        startFeed();
    }

    /**
     * The feed of rows naming an AUTO stream: a producer of their own, whose daemon knows not to
     * predict shards, so that the write's producer can tell its daemon every other stream places by key.
     */
    private TaskFeed autoStreamsFeed() {
        if (autoStreamsFeed == null) {
            autoStreamsProducer = ProducerRegistry.acquire(autoStreamsSpec);
            autoStreamsFeed = new TaskFeed(autoStreamsProducer, acks, queueStats, timeoutMs, this::refusedByKpl,
                RecordGrouping.ONE_BY_ONE, autoStreamsSpec.recordMaxBufferedTimeMs());
        }
        return autoStreamsFeed;
    }

    /** The task's feeds: the write's producer's, then that of rows naming an AUTO stream if any. */
    private List<TaskFeed> feeds() {
        return autoStreamsFeed == null ? List.of(feed) : List.of(feed, autoStreamsFeed);
    }

    /** A step of the task's feed, which may wait for room under the queue limit or for acknowledgements. */
    private interface FeedStep {
        void run() throws IOException, InterruptedException, TimeoutException;
    }

    private void inFeed(String doing, FeedStep step) throws IOException {
        try {
            step.run();
        } catch (TimeoutException | InterruptedException e) {
            throw feedFailed(doing, e);
        }
    }

    private IOException feedFailed(String doing, Exception cause) {
        if (cause instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return new IOException("Spark partition " + partitionId + " was interrupted " + doing, cause);
        }
        return new IOException("Spark partition " + partitionId + ", " + doing + ": " + cause.getMessage(), cause);
    }

    private void refusedByKpl(KinesisRecord record, long refusedRow, IllegalArgumentException error) throws IOException {
        failures.handle(new FailedRecord(record, refusedRow, RowLayout.DATA, "KplRejected",
            "the KPL refused the record for stream '" + record.stream() + "': " + error.getMessage()));
    }

    /**
     * Records Kinesis finally failed since the last row, reported on the callback thread; fails the
     * task at once if the producer itself failed any of its records.
     */
    private void handleKinesisFailures() throws IOException {
        acks.throwIfProducerFailed();
        for (FailedRecord failure = acks.pollFailure(); failure != null; failure = acks.pollFailure()) {
            failures.handle(failure);
        }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        try {
            return commitTask();
        } catch (IOException | RuntimeException e) {
            throw SinkTaskFailedException.named(e, partitionId, acks);
        }
    }

    private WriterCommitMessage commitTask() throws IOException {
        if (feed != null) {
            long started = System.nanoTime();
            inFeed("waiting for Kinesis to acknowledge the task's records", () -> TaskFeed.finish(feeds(), timeoutMs));
            if (LOG.isDebugEnabled()) {
                LOG.debug("Spark partition {}: {} records; producer in {} ms, rows in {} ms, then acknowledged {} ms after "
                    + "the commit began", partitionId, acks.added(), KplStreamingWrite.ms(acquireNanos),
                    KplStreamingWrite.ms(started - firstRowAt), KplStreamingWrite.ms(System.nanoTime() - started));
            }
        }
        handleKinesisFailures();
        failures.commit();
        committed = true;
        return summary();
    }

    private WriteSummary summary() {
        return WriteSummary.ofTask(acks, failures.count(), skipped, unaggregated, queueStats, rowStreams.met(), committed);
    }

    /** Polled by Spark while the task runs and at its end, for the Spark UI. */
    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return summary().taskMetrics();
    }

    /**
     * Delivers the rows accepted before the failure (the feed may still hold up to a batch of them),
     * as the error promises, and waits for Kinesis's answer for them, at most shutdownFlushTimeoutMs:
     * an executor stopped once the task has failed would drop what its KPL still holds. Records
     * already added cannot be recalled from the KPL. A killed task only sends them: a cancel is not
     * held up, and its error says they may still arrive.
     */
    @Override
    public void abort() throws IOException {
        try {
            if (feed != null && task != null && task.isInterrupted()) {
                inFeed("sending the rows accepted before the task was killed", () -> TaskFeed.send(feeds()));
            } else if (feed != null) {
                long waitMs = options.producer().shutdownFlushTimeoutMs();
                inFeed("delivering the rows accepted before the task failed", () -> TaskFeed.finish(feeds(), waitMs));
            }
        } finally {
            failures.abort();
        }
    }

    @Override
    public void close() {
        ExecutorTotals.taskEnded(summary());
        if (autoStreamsProducer != null) {
            autoStreamsFeed.discard();
            ProducerRegistry.release(autoStreamsProducer);
            autoStreamsProducer = null;
        }
        if (producer != null) {
            feed.discard();
            ProducerRegistry.release(producer);
            producer = null;
        }
    }
}
