package sparkkpl.producer;

import java.io.IOException;
import sparkkpl.util.ErrorTag;

/**
 * The KPL producer itself failed some of a task's records (its daemon died, or it lost them), so
 * whether they reached Kinesis is unknown. The task fails for Spark to retry it, whatever
 * {@code failOnError} says: {@code failOnError=false} covers records Kinesis refused, never records
 * that may simply be gone.
 */
public final class ProducerFailedException extends IOException {
    private static final long serialVersionUID = 1L;

    ProducerFailedException(long inDoubt, long added, Throwable cause) {
        // "at least": the task fails at the first such record, while the KPL is still failing the rest.
        super("The KPL producer failed at least " + inDoubt + " of this task's " + added + " records before "
            + "Kinesis answered for them (" + cause + "); they may or may not have reached the stream, so the "
            + "task fails for Spark to retry it, whatever failOnError says. With recordId=prefix the retry's "
            + "duplicates can be dropped by spark_kpl.dedup." + ErrorTag.Kind.PRODUCER_FAILED.of(inDoubt, added),
            cause);
    }
}
