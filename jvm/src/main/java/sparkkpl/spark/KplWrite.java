package sparkkpl.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;

/** One batch write: tasks send records through their executor's producer; the driver adds up what they report. */
final class KplWrite implements Write, BatchWrite {
    private static final Logger LOG = LoggerFactory.getLogger(KplWrite.class);

    private final WritePlan plan;
    private final WriteConfig config;

    KplWrite(WritePlan plan) {
        this.plan = plan;
        this.config = plan.config();
    }

    @Override
    public String description() {
        return "Kinesis (KPL) " + config;
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return SparkUiMetrics.all();
    }

    @Override
    public BatchWrite toBatch() {
        return this;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new KplWriterFactory(plan);
    }

    /** Every task has committed, so every record they added was acknowledged by Kinesis. */
    @Override
    public void commit(WriterCommitMessage[] messages) {
        WriteSummary total = WriteSummary.EMPTY;
        for (WriterCommitMessage message : messages) {
            total = total.plus((WriteSummary) message);
        }
        LOG.info("Kinesis write committed: {}", total.toMap());
        WriteSummary result = total;
        config.get(SinkOption.WRITE_ID).ifPresent(id -> WriteResults.publish(id, result));
    }

    /** Records already acknowledged stay in Kinesis: a stream cannot take them back (at-least-once). */
    @Override
    public void abort(WriterCommitMessage[] messages) {
        LOG.warn("Kinesis write aborted; records its committed tasks sent remain in the stream");
    }
}
