package sparkkpl.producer;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.failures.FailedRecord;
import sparkkpl.failures.FailedRecords;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.records.RowLayout;
import sparkkpl.util.Durations;

/**
 * The KPL producers one task feeds, and the way of each of its records to one: the JVM's producer for
 * the write, taken at the first record (an empty partition starts no daemon) for the streams the task
 * knows of, and taken anew when rows name a stream created again since its daemon met it; and, for rows
 * naming a stream that places records itself (AUTO), a producer of their own where the write has one.
 * What the KPL refuses and what Kinesis finally fails goes to the task's {@link FailedRecords}.
 * Not thread-safe: one task.
 */
public final class TaskProducers {
    private static final Logger LOG = LoggerFactory.getLogger(TaskProducers.class);
    private final int partitionId;
    private final ProducerSpec spec;
    /** The producer of rows naming an AUTO stream, or null: the write's own. */
    private final ProducerSpec autoStreamsSpec;
    /** The KPL builds the aggregates (aggregation=kpl, AggregationEnabled=true). */
    private final boolean kplAggregates;
    private final long timeoutMs;
    /** The task's grouping of records, made on its producer's shard maps once it has one. */
    private final Function<ShardMaps, RecordGrouping> groupingFor;
    /** What the task knows of each stream: its placement, its incarnation (described on its producer's maps). */
    private final RowStreams rowStreams;
    private final FailedRecords failures;
    private final TaskAcks acks;
    private final TaskQueueStats queueStats = new TaskQueueStats();
    private SharedProducer producer;
    private TaskFeed feed;
    /** Taken on the first row naming an AUTO stream, when that has a producer of its own. */
    private SharedProducer autoStreamsProducer;
    private TaskFeed autoStreamsFeed;
    /** ordering=key: one Kinesis record per shard in flight, and no row to a stream that places records itself. */
    private final boolean inKeyOrder;
    /** Records that went one per Kinesis record, as their stream places records itself. */
    private long unaggregated;
    /** When the first record came, and how long the task took to get its producer: the commit's timings. */
    private long firstRecordAt;
    private long acquireNanos;

    /**
     * @param autoStreamsSpec the producer of rows naming an AUTO stream, or null: the write's own
     * @param groupingFor the task's grouping of records on its producer's shard maps
     */
    public TaskProducers(int partitionId, WriteOptions options, ProducerSpec autoStreamsSpec,
                         Function<ShardMaps, RecordGrouping> groupingFor, RowStreams rowStreams, FailedRecords failures) {
        this.partitionId = partitionId;
        this.spec = options.producer();
        this.autoStreamsSpec = autoStreamsSpec;
        this.kplAggregates = options.aggregating().aggregatesRecords() && !options.aggregating().inExecutor();
        this.inKeyOrder = options.delivery().inKeyOrder();
        this.timeoutMs = options.delivery().ackTimeoutMs();
        this.groupingFor = groupingFor;
        this.rowStreams = rowStreams;
        this.failures = failures;
        this.acks = new TaskAcks(spec.recordAnswerTimeoutMs(), !inKeyOrder);
    }

    /** Sends row {@code rowNumber}'s record on its way, waiting for room under the queue limit if need be. */
    public void add(KinesisRecord record, long rowNumber) throws IOException {
        if (producer == null) {
            firstRecordAt = System.nanoTime();
            startFeed();
            acquireNanos = System.nanoTime() - firstRecordAt;
        }
        RowStreams.Placement placement = rowStreams.placement(record.stream());
        if (placement == RowStreams.Placement.UNKNOWN && kplAggregates) {
            throw rowStreams.refusedToKplAggregation(record.stream());
        }
        StreamDescription met = rowStreams.newlyMet();
        if (met != null && !producer.admits(met)) {
            replaceOutlivedProducer(met);
        }
        if (placement == RowStreams.Placement.BY_KINESIS) {
            if (inKeyOrder) {
                throw outOfKeyOrder(record.stream(), rowNumber);
            }
            unaggregated++;
        }
        try { // not through inFeed: its message and step would be two objects per row
            feed.resendMisplacedAndStarved();
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
        producer = ProducerRegistry.acquire(spec, rowStreams.known());
        rowStreams.use(producer.shardMaps());
        feed = new TaskFeed(producer, acks, queueStats, timeoutMs, this::refusedByKpl,
            groupingFor.apply(producer.shardMaps()), spec.recordMaxBufferedTimeMs());
        if (inKeyOrder) {
            feed.inKeyOrder();
        }
    }

    /** The option's name is written out: tasks do not load the option table (ExecutorsParseNothingTest). */
    private static IOException outOfKeyOrder(String stream, long rowNumber) {
        return new IOException("Row " + rowNumber + " names stream '" + stream + "', which places records itself (its "
            + "record distribution strategy is AUTO), ignoring partition keys: with ordering=key its rows cannot be kept "
            + "in order, so the task fails. Write that stream without ordering=key, or switch it to place by key");
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

    private void refusedByKpl(KinesisRecord record, long refusedRow, IllegalArgumentException error) throws IOException {
        failures.handle(new FailedRecord(record, refusedRow, RowLayout.DATA, "KplRejected",
            "the KPL refused the record for stream '" + record.stream() + "': " + error.getMessage()));
    }

    /**
     * Records Kinesis finally failed since the last call, reported on the callback thread; fails the
     * task at once if the producer itself failed any of its records.
     */
    public void handOverFailures() throws IOException {
        acks.throwIfProducerFailed();
        for (FailedRecord failure = acks.pollFailure(); failure != null; failure = acks.pollFailure()) {
            failures.handle(failure);
        }
    }

    /** At the task's commit: waits until Kinesis acknowledged or finally failed every record it added. */
    public void finish() throws IOException {
        if (feed == null) {
            return;
        }
        long started = System.nanoTime();
        inFeed("waiting for Kinesis to acknowledge the task's records", () -> TaskFeed.finish(feeds(), timeoutMs));
        if (LOG.isDebugEnabled()) {
            LOG.debug("Spark partition {}: {} records; producer in {} ms, rows in {} ms, then acknowledged {} ms after "
                + "the commit began", partitionId, acks.added(), Durations.ms(acquireNanos),
                Durations.ms(started - firstRecordAt), Durations.ms(System.nanoTime() - started));
        }
    }

    /**
     * After the task failed: delivers the records accepted before (the feeds may still hold up to a batch
     * of them), and waits for Kinesis's answer for them at most shutdownFlushTimeoutMs, as an executor
     * stopped once the task has failed would drop what its KPL still holds; a killed task only sends them,
     * so that a cancel is not held up.
     */
    public void deliverAccepted(boolean killed) throws IOException {
        if (feed != null && killed) {
            inFeed("sending the rows accepted before the task was killed", () -> TaskFeed.send(feeds()));
        } else if (feed != null) {
            long waitMs = spec.shutdownFlushTimeoutMs();
            inFeed("delivering the rows accepted before the task failed", () -> TaskFeed.finish(feeds(), waitMs));
        }
    }

    /** Gives the producers back to the JVM's pool, dropping what the feeds still hold. */
    public void release() {
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

    public TaskAcks acks() {
        return acks;
    }

    public TaskQueueStats queueStats() {
        return queueStats;
    }

    public long unaggregated() {
        return unaggregated;
    }

    /** The streams only rows name that the task described, for the driver's check at commit. */
    public Set<StreamDescription> streamsMet() {
        return rowStreams.met();
    }

    /** A step of the task's feeds, which may wait for room under the queue limit or for acknowledgements. */
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
}
