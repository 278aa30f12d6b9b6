package sparkkpl.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/** Shipped to executors: makes one writer per task of a batch write ({@link KplBatchWrite}). */
final class KplBatchWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    private final WritePlan plan;

    KplBatchWriterFactory(WritePlan plan) {
        this.plan = plan;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return plan.newWriter(partitionId, taskId, 0);
    }
}
