package sparkkpl.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.execution.SQLExecution;
import sparkkpl.config.SinkOption;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.metrics.ProgressFigures;
import sparkkpl.metrics.RunningWrites;
import sparkkpl.metrics.SparkUiMetrics;

/**
 * One write, before Spark says how it runs: as a batch ({@link KplBatchWrite}) or as a stream
 * ({@link KplStreamingWrite}), micro-batch by micro-batch.
 */
final class KplWrite implements Write {
    /** The write as its table keeps it: for a streaming query, what lasts all its micro-batches. */
    private final QueryWrite kept;
    /** The write as resolved: the batch's plan, or each micro-batch's, is made from it and the stream's look. */
    private final ResolvedWrite write;
    /** Where a streaming query's micro-batches leave their figures for its progress reports. */
    private final ProgressFigures progress;

    KplWrite(QueryWrite kept, ProgressFigures progress) {
        this.kept = kept;
        this.write = kept.resolved();
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
        if (write.options().query().checkpointLocation() != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.CHECKPOINT_LOCATION.optionName() + "' is for "
                + "df.writeStream; a batch write (df.write) has no checkpoint");
        }
        StreamLook look = StreamLook.perWrite();
        KplBatchWrite batch = new KplBatchWrite(look, write.plan(look));
        noteExecution(write.options().resultKey());
        return batch;
    }

    /** Spark asks on the thread running the write's SQL execution, whose id it holds as a local property. */
    private static void noteExecution(String resultKey) {
        String executionId = SparkSession.active().sparkContext().getLocalProperty(SQLExecution.EXECUTION_ID_KEY());
        if (resultKey != null && executionId != null) {
            RunningWrites.started(resultKey, Long.parseLong(executionId));
        }
    }

    @Override
    public StreamingWrite toStreaming() {
        if (write.options().shape().writeName() != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' is for batch writes "
                + "(df.write, also inside foreachBatch): a streaming query names its records by its own id, which its "
                + "checkpoint keeps");
        }
        return new KplStreamingWrite(write, kept.committedBatches(), kept.queryLook(), progress);
    }
}
