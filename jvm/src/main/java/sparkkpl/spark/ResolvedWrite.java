package sparkkpl.spark;

import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.WriteConfig;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.failures.DeadLetterFile;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.records.Partitioning;
import sparkkpl.records.PayloadFormat;
import sparkkpl.records.RowLayout;

/**
 * A write as the driver resolved it, once, before any task ({@link KplTable#newWriteBuilder}): its
 * values with their AUTO variant decided, the rows' layout, partitioner and payload format. Each plan
 * its tasks run (one per batch write, one per micro-batch of a streaming query) is this, complete with
 * the driver's look at the stream ({@link StreamLook}).
 *
 * @param config the write's values, and those for a stream that places records itself (AUTO)
 * @param queryId Spark's id of the write ({@code LogicalWriteInfo.queryId}): a fresh one per batch
 *     write, the query's own (kept in its checkpoint) for a streaming query
 * @param deadLetters where undelivered records go, or null
 * @param autoStreamsProducer the producer of the rows that name an AUTO stream, or null
 *     ({@link WritePlan})
 */
record ResolvedWrite(WriteConfig config, RowLayout layout, PayloadFormat format, Partitioning partitioning,
                     String queryId, DeadLetterFile.Location deadLetters, ProducerSpec autoStreamsProducer) {
    private static final Logger LOG = LoggerFactory.getLogger(ResolvedWrite.class);

    WriteOptions options() {
        return config.options();
    }

    /** Whether the tasks list the shards of the streams they write: they group the user's keys by shard. */
    boolean listsShards() {
        WriteOptions options = options();
        return options.aggregating().inExecutor() && (!partitioning.choosesKeys() || layout.hasExplicitHashKey());
    }

    /** The plan of the tasks of one batch write or micro-batch, for the streams as the driver sees them now. */
    WritePlan plan(StreamLook looks) {
        StreamLook.Look look = looks.look(options(), listsShards());
        return new WritePlan(fitted(look.streams()), layout, format, partitioning, queryId, deadLetters, look,
            autoStreamsProducer);
    }

    /** The write's values fitted to each described stream (its maximum record size: {@code RecordAssembler}). */
    private WriteOptions fitted(Map<String, StreamDescription> described) {
        WriteOptions fitted = options();
        for (StreamDescription stream : described.values()) {
            if (stream.keysIgnored() && fitted.aggregating().aggregatesRecords()) {
                fitted = config.forAutoStream(stream.stream());
                LOG.warn("Stream '{}' places records itself (record distribution strategy AUTO): the sink sends one "
                    + "Kinesis record per row to it, not aggregated", stream.stream());
            }
        }
        return fitted;
    }
}
