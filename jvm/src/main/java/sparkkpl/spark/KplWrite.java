package sparkkpl.spark;

import java.util.Optional;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.metrics.SparkUiMetrics;
import sparkkpl.metrics.WriteResults;
import sparkkpl.metrics.WriteSummary;
import sparkkpl.streaming.CommittedBatches;

/**
 * One write: as a batch, tasks send records through their executor's producer and the driver adds up
 * what they report; as a stream, {@link KplStreamingWrite} does the same per micro-batch.
 */
final class KplWrite implements Write {
    private static final Logger LOG = LoggerFactory.getLogger(KplWrite.class);

    private static final String COMMITTED_BATCHES_DIR = "kpl-sink";
    private static final String DEFAULT_CHECKPOINT_ROOT = "spark.sql.streaming.checkpointLocation";

    private final WritePlan plan;
    private final WriteConfig config;

    KplWrite(WritePlan plan) {
        this.plan = plan;
        this.config = plan.config();
    }

    /** Secrets masked (WriteConfig.toString); shown in the plan, so in the Spark UI's SQL tab. */
    @Override
    public String description() {
        return "Kinesis (KPL) " + config;
    }

    @Override
    public String toString() {
        return description();
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return SparkUiMetrics.all();
    }

    @Override
    public BatchWrite toBatch() {
        if (config.get(SinkOption.CHECKPOINT_LOCATION).isPresent()) {
            throw new IllegalArgumentException("Option '" + SinkOption.CHECKPOINT_LOCATION.optionName() + "' is for "
                + "df.writeStream; a batch write (df.write) has no checkpoint");
        }
        return new Batch(plan.described(StreamLook.perWrite()));
    }

    @Override
    public StreamingWrite toStreaming() {
        if (config.get(SinkOption.WRITE_NAME).isPresent()) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' is for batch writes "
                + "(df.write, also inside foreachBatch): a streaming query names its records by its own id, which its "
                + "checkpoint keeps");
        }
        return new KplStreamingWrite(plan, new CommittedBatches(committedBatchesDirectory(),
            SparkSession.active().sparkContext().hadoopConfiguration()));
    }

    /**
     * Under the query's checkpoint: the checkpointLocation option Spark passes on, else under the
     * session's default checkpoint root, named by the query id, which the checkpoint keeps.
     */
    private String committedBatchesDirectory() {
        Optional<String> checkpoint = config.get(SinkOption.CHECKPOINT_LOCATION);
        if (checkpoint.isPresent()) {
            return checkpoint.get() + "/" + COMMITTED_BATCHES_DIR;
        }
        scala.Option<String> root = SparkSession.active().conf().getOption(DEFAULT_CHECKPOINT_ROOT);
        if (root.isEmpty()) {
            throw new IllegalArgumentException("The kpl sink keeps its committed micro-batches under the query's "
                + "checkpoint: set .option(\"checkpointLocation\", ...) on writeStream, or " + DEFAULT_CHECKPOINT_ROOT);
        }
        return root.get() + "/" + COMMITTED_BATCHES_DIR + "-" + plan.writeId();
    }

    /** A batch write, with its stream described once, before its tasks. */
    private static final class Batch implements BatchWrite {
        private final WritePlan plan;

        Batch(WritePlan plan) {
            this.plan = plan;
        }

        @Override
        public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            return new KplWriterFactory(plan);
        }

        /** Every task has committed, so every record they added was acknowledged by Kinesis. */
        @Override
        public void commit(WriterCommitMessage[] messages) {
            StreamLook.confirmUnchanged(plan.config(), plan.streams());
            WriteSummary total = WriteSummary.sum(messages);
            LOG.info("Kinesis write committed: {}", total.toMap());
            plan.config().get(SinkOption.WRITE_ID).ifPresent(id -> WriteResults.publish(id, total));
        }

        /** Records already acknowledged stay in Kinesis: a stream cannot take them back (at-least-once). */
        @Override
        public void abort(WriterCommitMessage[] messages) {
            LOG.warn("Kinesis write aborted; records its committed tasks sent remain in the stream");
        }
    }
}
