package sparkkpl.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;

/** Shipped to executors: makes one writer per task. */
final class KplWriterFactory implements DataWriterFactory {
    private static final long serialVersionUID = 1L;

    private final WriteConfig config;
    private final RowLayout layout;
    private final String writeId;
    /** Null when no deadLetterPath is set. */
    private final DeadLetterFile.Location deadLetters;

    KplWriterFactory(WriteConfig config, RowLayout layout, String writeId, DeadLetterFile.Location deadLetters) {
        this.config = config;
        this.layout = layout;
        this.writeId = writeId;
        this.deadLetters = deadLetters;
    }

    /** @param taskId unique to the task attempt, so each attempt has its own dead-letter file */
    @Override
    public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
        DeadLetterFile deadLetterFile = deadLetters == null ? null
            : new DeadLetterFile(deadLetters, "kpl-" + writeId + "-p" + partitionId + "-t" + taskId + ".json");
        FailedRecords failures = new FailedRecords(partitionId, config.getBoolean(SinkOption.FAIL_ON_ERROR),
            deadLetterFile);
        return new KplDataWriter(partitionId, config, new RecordAssembler(config, layout), failures);
    }
}
