package sparkkpl.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import sparkkpl.config.WriteConfig;

/** Shipped to executors: makes one writer per task. */
final class KplWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    private final WriteConfig config;
    private final RowLayout layout;

    KplWriterFactory(WriteConfig config, RowLayout layout) {
        this.config = config;
        this.layout = layout;
    }

    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        return new KplDataWriter(partitionId, config, layout);
    }
}
