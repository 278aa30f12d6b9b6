package sparkkpl.spark;

import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.metrics.WriteResults;
import sparkkpl.metrics.WriteSummary;

/**
 * A batch write (df.write), with its stream described once, before its tasks: tasks send records through
 * their executor's producer, and the driver adds up what they report.
 */
final class KplBatchWrite implements BatchWrite {
    private static final Logger LOG = LoggerFactory.getLogger(KplBatchWrite.class);

    private final StreamLook look;
    private final WritePlan plan;

    KplBatchWrite(StreamLook look, WritePlan plan) {
        this.look = look;
        this.plan = plan;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        KplPlugin.adviseWhereMissing(plan);
        return new KplBatchWriterFactory(plan);
    }

    /** Every task has committed, so every record they added was acknowledged by Kinesis. */
    @Override
    public void commit(WriterCommitMessage[] messages) {
        WriteSummary total = WriteSummary.sum(messages);
        plan.confirmUnchanged(look, total.streamsMet());
        LOG.info("Kinesis write committed: {}", total.toMap());
        if (plan.options().resultKey() != null) {
            WriteResults.publish(plan.options().resultKey(), total);
        }
    }

    /** Records already acknowledged stay in Kinesis: a stream cannot take them back (at-least-once). */
    @Override
    public void abort(WriterCommitMessage[] messages) {
        LOG.warn("Kinesis write aborted; records its committed tasks sent remain in the stream");
    }
}
