package sparkkpl.producer;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import software.amazon.kinesis.producer.Attempt;
import software.amazon.kinesis.producer.UserRecordFailedException;
import software.amazon.kinesis.producer.UserRecordResult;

/**
 * Acknowledgements of one task's own records. The producer is shared by every task of the JVM, so
 * a task must wait for its records only, never for the whole producer's queue.
 */
public final class TaskAcks {
    private long added;
    private long succeeded;
    private long failed;
    private long bytesSucceeded;
    private String firstFailure;

    void track(ListenableFuture<UserRecordResult> future, String stream, String partitionKey, long bytes) {
        synchronized (this) {
            added++;
        }
        Futures.addCallback(future, new FutureCallback<UserRecordResult>() {
            @Override
            public void onSuccess(UserRecordResult result) {
                completed(true, bytes, null);
            }

            @Override
            public void onFailure(Throwable error) {
                completed(false, bytes, "stream '" + stream + "', partition key '" + partitionKey + "': "
                    + describe(error));
            }
        }, MoreExecutors.directExecutor());
    }

    private synchronized void completed(boolean success, long bytes, String failure) {
        if (success) {
            succeeded++;
            bytesSucceeded += bytes;
        } else {
            failed++;
            if (firstFailure == null) {
                firstFailure = failure;
            }
        }
        notifyAll();
    }

    /**
     * Kinesis's error code and message from the last attempt, which is why the record finally
     * failed, and the other errors its attempts met ("Expired" alone would hide the cause).
     */
    static String describe(Throwable error) {
        if (!(error instanceof UserRecordFailedException)) {
            return String.valueOf(error);
        }
        List<Attempt> attempts = ((UserRecordFailedException) error).getResult().getAttempts();
        if (attempts.isEmpty()) {
            return String.valueOf(error);
        }
        Attempt last = attempts.get(attempts.size() - 1);
        Set<String> earlier = new LinkedHashSet<>();
        for (Attempt attempt : attempts.subList(0, attempts.size() - 1)) {
            earlier.add(attempt.getErrorCode() + ": " + attempt.getErrorMessage());
        }
        return last.getErrorCode() + ": " + last.getErrorMessage() + " (after " + attempts.size() + " attempts"
            + (earlier.isEmpty() ? "" : "; earlier: " + String.join("; ", earlier)) + ")";
    }

    /**
     * Blocks until every record this task added is acknowledged or finally failed.
     *
     * @param flush sends what the KPL still buffers, so the task does not wait out RecordMaxBufferedTime
     * @throws TimeoutException saying how many of this task's records are still outstanding
     */
    public void awaitAll(Runnable flush, long timeoutMs) throws InterruptedException, TimeoutException {
        flush.run();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (this) {
            while (succeeded + failed < added) {
                long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (leftMs <= 0) {
                    throw new TimeoutException((added - succeeded - failed) + " of this task's " + added
                        + " records were still not acknowledged by Kinesis after " + timeoutMs + " ms");
                }
                wait(Math.min(leftMs, 500));
            }
        }
    }

    public synchronized long succeeded() {
        return succeeded;
    }

    public synchronized long failed() {
        return failed;
    }

    public synchronized long bytesSucceeded() {
        return bytesSucceeded;
    }

    /** The first final failure, naming stream, partition key and Kinesis's error; null if none. */
    public synchronized String firstFailure() {
        return firstFailure;
    }
}
