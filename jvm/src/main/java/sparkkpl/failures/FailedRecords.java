package sparkkpl.failures;

import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.util.ErrorTag;

/**
 * One task's records that will not reach Kinesis. With {@code failOnError} the first one fails the
 * task, naming it. Otherwise each is counted, the first few are logged (then one summary per task,
 * not a line per record) and, when a dead-letter file is given, kept there.
 */
public final class FailedRecords {
    private static final Logger LOG = LoggerFactory.getLogger(FailedRecords.class);
    /**
     * The sentence naming an undelivered record, by its tag's fields: worded here only, and filled the same
     * way by spark_kpl's RecordsNotDelivered (through sink_facts.json).
     */
    public static final String KINESIS_FAILED = "Row {row} of Spark partition {sparkPartition}: Kinesis finally "
        + "failed the record for stream '{stream}', partition key '{partitionKey}': {errorCode}: {errorMessage}";
    public static final String ROW_REFUSED = "Row {row} of Spark partition {sparkPartition}, column '{column}': "
        + "{errorMessage}";
    static final int LOGGED_PER_TASK = 10;

    private final int partitionId;
    private final boolean failOnError;
    /** Null when the user named no deadLetterPath. */
    private final DeadLetterFile deadLetters;
    private long count;

    public FailedRecords(int partitionId, boolean failOnError, DeadLetterFile deadLetters) {
        this.partitionId = partitionId;
        this.failOnError = failOnError;
        this.deadLetters = deadLetters;
    }

    /** @throws IOException or IllegalArgumentException (a bad row) with failOnError, naming the record */
    public void handle(FailedRecord failure) throws IOException {
        count++;
        if (failOnError) {
            String problem = describe(failure) + ". Rows before it were handed to Kinesis, and the task waited for them "
                + "(up to shutdownFlushTimeoutMs) before failing (failOnError=false would count it and carry on)" + errorTag(failure);
            if (failure.column() != null) {
                throw new RowRefusedException(problem);
            }
            throw new UndeliveredException(problem);
        }
        if (count <= LOGGED_PER_TASK) {
            LOG.warn("Not delivered to Kinesis: {}", describe(failure));
        }
        if (deadLetters != null) {
            deadLetters.write(failure, partitionId);
        }
    }

    /** What spark_kpl raises as RecordsNotDelivered: the dead letter's fields but the data, and the column. */
    private String errorTag(FailedRecord failure) {
        return ErrorTag.Kind.RECORDS_NOT_DELIVERED.of(tagValues(failure));
    }

    String describe(FailedRecord failure) {
        return ErrorTag.Kind.RECORDS_NOT_DELIVERED.fill(failure.column() == null ? KINESIS_FAILED : ROW_REFUSED,
            tagValues(failure));
    }

    /** In the order of {@link ErrorTag.Kind#RECORDS_NOT_DELIVERED}'s fields. */
    private Object[] tagValues(FailedRecord failure) {
        var record = failure.record();
        return new Object[] {record.stream(), record.partitionKey(), record.explicitHashKey(), partitionId,
            failure.rowNumber(), failure.column(), failure.errorCode(), failure.errorMessage()};
    }

    /** Kinesis finally failed a record, and {@code failOnError} fails the task; the message ends in its tag. */
    public static final class UndeliveredException extends IOException {
        private static final long serialVersionUID = 1L;

        UndeliveredException(String message) {
            super(message);
        }
    }

    /** A row could not become a record, and {@code failOnError} fails the task; the message ends in its tag. */
    public static final class RowRefusedException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        RowRefusedException(String message) {
            super(message);
        }
    }

    public long count() {
        return count;
    }

    /** Before the task commits: the summary line, and the dead-letter file made visible. */
    public void commit() throws IOException {
        if (count > LOGGED_PER_TASK) {
            LOG.warn("Spark partition {}: {} records not delivered to Kinesis ({} logged above){}", partitionId, count,
                LOGGED_PER_TASK, deadLetters == null ? "; no deadLetterPath is set, so only counted" : "");
        }
        if (deadLetters != null) {
            deadLetters.commit();
        }
    }

    public void abort() throws IOException {
        if (deadLetters != null) {
            deadLetters.abort();
        }
    }
}
