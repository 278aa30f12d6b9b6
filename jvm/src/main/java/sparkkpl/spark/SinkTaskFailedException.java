package sparkkpl.spark;

import java.io.IOException;
import org.apache.spark.TaskKilledException;
import sparkkpl.producer.TaskAcks;
import sparkkpl.util.ErrorTag;

/**
 * A task of the sink failed for a reason no other tag names (the daemon could not be placed, a
 * region or credentials were missing on the executor, a timeout...): tagged as {@code ProducerFailed}
 * so that Python raises {@code spark_kpl.ProducerFailed} with this message, as for a failed producer:
 * records the task had added and Kinesis had not answered for may or may not reach the stream.
 */
public final class SinkTaskFailedException extends IOException {
    private static final long serialVersionUID = 1L;
    /** The reason as the tag carries it: enough to read, short enough to survive Spark Connect. */
    private static final int REASON_CHARS = 1000;

    private SinkTaskFailedException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * What the task fails with for {@code error}: this exception around it; {@code error} itself
     * (thrown from here) when it is already tagged, or a task kill that Spark must see as one.
     */
    static IOException named(Exception error, int partitionId, TaskAcks acks) throws IOException {
        if (error instanceof TaskKilledException || ErrorTag.taggedIn(error)) {
            if (error instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) error;
        }
        String reason = error.getMessage() == null ? error.getClass().getName() : error.getMessage();
        if (reason.length() > REASON_CHARS) {
            reason = reason.substring(0, REASON_CHARS) + "...";
        }
        long added = acks.added();
        long unanswered = acks.unanswered();
        return new SinkTaskFailedException("Spark partition " + partitionId + " of the kpl sink failed with "
            + unanswered + " of its " + added + " records added to the KPL not yet answered for by Kinesis: "
            + reason + ErrorTag.Kind.PRODUCER_FAILED.of(unanswered, added, reason), error);
    }
}
