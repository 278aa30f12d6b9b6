package sparkkpl.spark;

import java.io.Serializable;
import java.util.Collection;
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
import sparkkpl.producer.TaskProducers;
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
 * @param look the driver's look at the streams this write (or micro-batch) stands on: the streams it
 *     described, and its id (the executors describe the streams rows name once per look and JVM)
 * @param autoStreamsProducer the producer of the rows that name a stream which places records itself
 *     (AUTO): not aggregated, its daemon told so; null where the user set the KPL's
 *     RecordDistributionStrategyDefault, or rows name no streams
 */
record WritePlan(WriteOptions options, RowLayout layout, PayloadFormat format, Partitioning partitioning,
                 String queryId, DeadLetterFile.Location deadLetters, StreamLook.Look look,
                 ProducerSpec autoStreamsProducer) implements Serializable {

    /**
     * The producer of rows naming an AUTO stream, when it is not the write's own (the write's own
     * stream is AUTO, and the whole write goes unaggregated), else null.
     */
    private ProducerSpec separateAutoStreamsProducer() {
        return autoStreamsProducer == null || autoStreamsProducer.equals(options.producer()) ? null : autoStreamsProducer;
    }

    /**
     * After every task committed: fails the write if a stream it stood on was created again while it ran
     * ({@link StreamLook#confirmUnchanged}).
     *
     * @param metByTasks the streams rows named, as the tasks' JVMs described them
     */
    void confirmUnchanged(StreamLook looks, Collection<StreamDescription> metByTasks) {
        looks.confirmUnchanged(options, look, metByTasks).ifPresent(recreated -> {
            throw new StreamRecreatedException(recreated.stream(), recreated.created(), options.shape().writeName());
        });
    }

    /** The recordId=prefix header maker, or null without one. */
    private RecordIdHeader recordIdHeader() {
        if (options.shape().recordId() != RecordId.PREFIX) {
            return null;
        }
        return options.shape().writeName() != null ? RecordIdHeader.named(options.shape().writeName()) : new RecordIdHeader(queryId);
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
        FailedRecords failures = new FailedRecords(partitionId, options.delivery().failOnError(),
            deadLetterFile);
        RecordIdHeader header = recordIdHeader();
        RecordAssembler assembler = new RecordAssembler(options, layout, format, partitioning,
            header == null ? null : header.forTask(batchId, partitionId), partitionId, look.streams());
        RowStreams rowStreams = new RowStreams(look.streams(), look.id(), System::nanoTime);
        return new KplDataWriter(partitionId, assembler, failures, new TaskProducers(partitionId, options,
            separateAutoStreamsProducer(), shardMaps -> recordGrouping(shardMaps, rowStreams), rowStreams, failures));
    }

    /**
     * A task's grouping of records into the KPL's user records ({@link Aggregation}), on the shard maps
     * of the producer it feeds, for the incarnation of each stream the task knows: aggregates per shard,
     * or (the KPL aggregates) each record alone, routed to its shard for the queue limit's budget.
     */
    private RecordGrouping recordGrouping(ShardMaps shardMaps, RowStreams rowStreams) {
        ProducerSpec producer = options.producer();
        return options.aggregating().inExecutor()
            ? new ShardAggregator(shardMaps, producer.queueLimit(), producer.queueLimitBytes(),
                options.aggregating().aggregateMaxBytes(), partitioning.choosesKeys(), partitioning.drawsRandomKeys(),
                rowStreams)
            : new ShardRouting(shardMaps, partitioning.drawsRandomKeys(), rowStreams);
    }
}
