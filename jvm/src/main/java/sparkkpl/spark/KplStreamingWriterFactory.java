package sparkkpl.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import sparkkpl.metrics.WriteSummary;

/**
 * Shipped to executors: makes one writer per task of a micro-batch ({@link KplStreamingWrite}), or, for
 * a batch committed before a restart that Spark runs again, one that sends nothing.
 */
final class KplStreamingWriterFactory implements StreamingDataWriterFactory {
    private static final long serialVersionUID = 1L;

    private final WritePlan plan;
    /** The query's last committed micro-batch when this one was planned. */
    private final long lastCommitted;

    KplStreamingWriterFactory(WritePlan plan, long lastCommitted) {
        this.plan = plan;
        this.lastCommitted = lastCommitted;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long batchId) {
        return batchId <= lastCommitted ? new ReplayedBatchWriter() : plan.newWriter(partitionId, taskId, batchId);
    }

    /** Counts the rows of a batch the sink already delivered before a restart, and sends none. */
    private static final class ReplayedBatchWriter implements DataWriter<InternalRow> {
        private long rows;

        @Override
        public void write(InternalRow row) {
            rows++;
        }

        @Override
        public WriterCommitMessage commit() {
            return WriteSummary.ofReplayedRows(rows);
        }

        @Override
        public void abort() {}

        @Override
        public void close() {}
    }
}
