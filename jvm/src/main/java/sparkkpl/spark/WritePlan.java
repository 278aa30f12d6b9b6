package sparkkpl.spark;

import java.io.Serializable;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;

/**
 * Everything one write's tasks need, resolved and checked on the driver and shipped to executors.
 *
 * @param writeId Spark's id of the write: a fresh one per batch write, the query's own (kept in
 *     its checkpoint) for a streaming query
 * @param deadLetters where undelivered records go, or null
 */
record WritePlan(WriteConfig config, RowLayout layout, Partitioning partitioning, String writeId,
                 DeadLetterFile.Location deadLetters) implements Serializable {

    /** A writer for one task attempt ({@code taskId} is unique to the attempt). */
    KplDataWriter newWriter(int partitionId, long taskId) {
        DeadLetterFile deadLetterFile = deadLetters == null ? null
            : new DeadLetterFile(deadLetters, "kpl-" + writeId + "-p" + partitionId + "-t" + taskId + ".json");
        FailedRecords failures = new FailedRecords(partitionId, config.getBoolean(SinkOption.FAIL_ON_ERROR),
            deadLetterFile);
        return new KplDataWriter(partitionId, config, new RecordAssembler(this, partitionId), failures);
    }
}
