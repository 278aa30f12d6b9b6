package sparkkpl.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import sparkkpl.config.SinkOption;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.metrics.ProgressFigures;
import sparkkpl.metrics.SparkUiMetrics;
import sparkkpl.streaming.CommittedBatches;

/**
 * One write, before Spark says how it runs: as a batch ({@link KplBatchWrite}) or as a stream
 * ({@link KplStreamingWrite}), micro-batch by micro-batch.
 */
final class KplWrite implements Write {
    private static final String COMMITTED_BATCHES_DIR = "kpl-sink";
    private static final String DEFAULT_CHECKPOINT_ROOT = "spark.sql.streaming.checkpointLocation";

    /** The write as resolved: the batch's plan, or each micro-batch's, is made from it and the stream's look. */
    private final ResolvedWrite write;
    /** Where a streaming query's micro-batches leave their figures for its progress reports. */
    private final ProgressFigures progress;

    KplWrite(ResolvedWrite write, ProgressFigures progress) {
        this.write = write;
        this.progress = progress;
    }

    /** Secrets masked (WriteOptions.toString); shown in the plan, so in the Spark UI's SQL tab. */
    @Override
    public String description() {
        return "Kinesis (KPL) " + write.options();
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
        if (write.options().checkpointLocation() != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.CHECKPOINT_LOCATION.optionName() + "' is for "
                + "df.writeStream; a batch write (df.write) has no checkpoint");
        }
        StreamLook look = StreamLook.perWrite();
        return new KplBatchWrite(look, look.described(write));
    }

    @Override
    public StreamingWrite toStreaming() {
        if (write.options().writeName() != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' is for batch writes "
                + "(df.write, also inside foreachBatch): a streaming query names its records by its own id, which its "
                + "checkpoint keeps");
        }
        return new KplStreamingWrite(write, new CommittedBatches(committedBatchesDirectory(),
            SparkSession.active().sparkContext().hadoopConfiguration()), progress);
    }

    /**
     * Under the query's checkpoint: the checkpointLocation option Spark passes on, else under the
     * session's default checkpoint root, named by the query id, which the checkpoint keeps.
     */
    private String committedBatchesDirectory() {
        String checkpoint = write.options().checkpointLocation();
        if (checkpoint != null) {
            return checkpoint + "/" + COMMITTED_BATCHES_DIR;
        }
        scala.Option<String> root = SparkSession.active().conf().getOption(DEFAULT_CHECKPOINT_ROOT);
        if (root.isEmpty()) {
            throw new IllegalArgumentException("The kpl sink keeps its committed micro-batches under the query's "
                + "checkpoint: set .option(\"checkpointLocation\", ...) on writeStream, or " + DEFAULT_CHECKPOINT_ROOT);
        }
        return root.get() + "/" + COMMITTED_BATCHES_DIR + "-" + write.queryId();
    }
}
