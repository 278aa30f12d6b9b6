package sparkkpl.spark;

import java.io.Serializable;
import java.util.Map;
import sparkkpl.aggregation.ShardAggregator;
import sparkkpl.aggregation.ShardRouting;
import sparkkpl.config.Aggregation;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.RecordId;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.failures.DeadLetterFile;
import sparkkpl.failures.FailedRecords;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.producer.RecordGrouping;
import sparkkpl.records.Partitioning;
import sparkkpl.records.PayloadFormat;
import sparkkpl.records.RecordAssembler;
import sparkkpl.records.RecordIdHeader;
import sparkkpl.records.RowLayout;

/**
 * Everything the tasks of one batch write or micro-batch need, resolved and checked on the driver
 * ({@link ResolvedWrite#plan}) and shipped to executors.
 *
 * @param options the write's values, fitted to the streams the driver described
 * @param queryId Spark's id of the write ({@code LogicalWriteInfo.queryId}): a fresh one per batch write, the query's own (kept in
 *     its checkpoint) for a streaming query
 * @param deadLetters where undelivered records go, or null
 * @param streams the streams the driver described for this write (or micro-batch), by name
 * @param autoStreamsProducer the producer of the rows that name a stream which places records itself
 *     (AUTO): not aggregated, its daemon told so; null where the user set the KPL's
 *     RecordDistributionStrategyDefault, or rows name no streams
 * @param lookId the driver's look that described {@code streams} ({@code StreamLook}): the executors
 *     describe the streams rows name once per look and JVM
 */
record WritePlan(WriteOptions options, RowLayout layout, PayloadFormat format, Partitioning partitioning,
                 String queryId, DeadLetterFile.Location deadLetters, Map<String, StreamDescription> streams,
                 ProducerSpec autoStreamsProducer, String lookId) implements Serializable, StreamLook.Plan {

    /**
     * The producer of rows naming an AUTO stream, when it is not the write's own (the write's own
     * stream is AUTO, and the whole write goes unaggregated), else null.
     */
    private ProducerSpec separateAutoStreamsProducer() {
        return autoStreamsProducer == null || autoStreamsProducer.equals(options.producer()) ? null : autoStreamsProducer;
    }

    @Override
    public StreamRecreatedException recreated(String stream, String created) {
        return new StreamRecreatedException(stream, created, options.writeName());
    }

    /** The recordId=prefix header maker, or null without one. */
    private RecordIdHeader recordIdHeader() {
        if (options.recordId() != RecordId.PREFIX) {
            return null;
        }
        return options.writeName() != null ? RecordIdHeader.named(options.writeName()) : new RecordIdHeader(queryId);
    }

    /**
     * A writer for one task attempt.
     *
     * @param taskId unique to the attempt
     * @param batchId the streaming micro-batch (epoch) id, 0 for a batch write
     */
    KplDataWriter newWriter(int partitionId, long taskId, long batchId) {
        DeadLetterFile deadLetterFile = deadLetters == null ? null : new DeadLetterFile(deadLetters,
            "kpl-" + queryId + "-b" + batchId + "-p" + partitionId + "-t" + taskId + ".json");
        FailedRecords failures = new FailedRecords(partitionId, options.failOnError(),
            deadLetterFile);
        RecordIdHeader header = recordIdHeader();
        RecordAssembler assembler = new RecordAssembler(options, layout, format, partitioning,
            header == null ? null : header.forTask(batchId, partitionId), partitionId, streams);
        RowStreams rowStreams = new RowStreams(streams, lookId, System::nanoTime);
        return new KplDataWriter(partitionId, options, assembler, failures,
            shardMaps -> recordGrouping(shardMaps, rowStreams), rowStreams, separateAutoStreamsProducer());
    }

    /**
     * A task's grouping of records into the KPL's user records ({@link Aggregation}), on the shard maps
     * of the producer it feeds, for the incarnation of each stream the task knows: aggregates per shard,
     * or (the KPL aggregates) each record alone, routed to its shard for the queue limit's budget.
     */
    private RecordGrouping recordGrouping(ShardMaps shardMaps, RowStreams rowStreams) {
        ProducerSpec producer = options.producer();
        return options.aggregatesInExecutor()
            ? new ShardAggregator(shardMaps, producer.queueLimit(), producer.queueLimitBytes(),
                options.aggregateMaxBytes(), partitioning.choosesKeys(), rowStreams)
            : new ShardRouting(shardMaps, partitioning.choosesKeys(), rowStreams);
    }
}
