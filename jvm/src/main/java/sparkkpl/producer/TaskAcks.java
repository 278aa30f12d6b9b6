package sparkkpl.producer;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import software.amazon.kinesis.producer.Attempt;
import software.amazon.kinesis.producer.FutureTimedOutException;
import software.amazon.kinesis.producer.UserRecordFailedException;
import software.amazon.kinesis.producer.UserRecordResult;
import sparkkpl.failures.FailedRecord;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.util.OffTaskThread;

/**
 * Acknowledgements of one task's own records. The producer is shared by every task of the JVM, so
 * a task must wait for its records only, never for the whole producer's queue. Final failures
 * arrive on the KPL's callback thread and are queued for the task's own thread to handle.
 *
 * <p>Only Kinesis's final refusal ({@link UserRecordFailedException}, with its attempts) is a record
 * failure, for {@code failOnError} and the dead letters to handle. Any other exception means the
 * producer itself failed (its daemon died and the KPL failed every outstanding record, or it lost
 * one): nobody knows whether those records reached Kinesis, so they are "in doubt" and the task
 * fails for Spark to retry it, whatever {@code failOnError} says. Counting them as failed would
 * commit a task, or a streaming batch, whose records may be gone.
 */
public final class TaskAcks {
    /** The longest pause between two flushes while a task waits at commit. */
    private static final long MAX_REFLUSH_MS = 500;
    /** Times out the KPL futures of every task of the JVM; cancelled timers leave its queue at once. */
    private static final ScheduledExecutorService UNANSWERED = unansweredTimer();
    private final Queue<FailedRecord> failures = new ConcurrentLinkedQueue<>();
    private final Queue<Misplaced> misplaced = new ConcurrentLinkedQueue<>();
    private final Queue<Starved> starved = new ConcurrentLinkedQueue<>();
    private long added;
    private long succeeded;
    private long failed;
    private long inDoubt;
    private long bytesSucceeded;
    /** Kinesis records acknowledged (each carries one or more of the task's records). */
    private long kinesisRecordsSucceeded;
    /** Attempts of the task's Kinesis records that Kinesis throttled, answered or not. */
    private long throttledAttempts;
    /**
     * Records sent again: Kinesis stored their aggregate where a consumer drops them, or refused every attempt
     * for its shard's throughput until RecordTtl.
     */
    private long resent;
    /** The first failure of the producer itself among this task's records, or null. */
    private Throwable producerFailure;
    /** Why the task cannot account for some of its records, or null. */
    private IOException taskFailure;

    /** How long the KPL may take to answer for a record; 0: as long as it takes. */
    private final long recordTimeoutMs;
    /** Whether a record starved at its shard's throughput goes again ({@link #takeStarved}) rather than failing. */
    private final boolean resendsStarved;

    /** Acknowledgements the KPL's own timeout alone bounds (tests, tools). */
    public TaskAcks() {
        this(0, true);
    }

    /**
     * @param recordTimeoutMs how long the KPL may take to answer for a record before the task fails
     * @param resendsStarved whether a record Kinesis refused for its shard's throughput in every attempt until
     *     RecordTtl is the task's to send again: never stored, it only waited its turn too long (the stream
     *     took others meanwhile), and a write faster than its stream waits rather than fails. Not with
     *     {@code ordering=key}, where the records behind it in its shard went on once it was answered.
     */
    public TaskAcks(long recordTimeoutMs, boolean resendsStarved) {
        this.recordTimeoutMs = recordTimeoutMs;
        this.resendsStarved = resendsStarved;
    }

    /**
     * An aggregate Kinesis stored in shard {@code storedIn}, not in the shard it was built for, or
     * stored after an attempt found no such stream ({@code streamWentMissing}: it may have been
     * deleted and created again, whose shard ids start over): the task decides whether its records
     * stand there or are sent again ({@link #settleMisplaced}).
     */
    public record Misplaced(KplRecord record, String storedIn, boolean streamWentMissing) {}

    /** A record that starved at its shard's throughput, with the producer it went through, whose feed sends it again. */
    private record Starved(KplRecord record, SharedProducer producer) {}

    private static final String STREAM_NOT_FOUND = "ResourceNotFoundException";
    private static final String THROTTLED = "ProvisionedThroughputExceededException";
    /** The KPL's own last attempt of a record it gave up on at RecordTtl. */
    private static final String EXPIRED = "Expired";

    /**
     * Tracks one KPL record: Kinesis's answer for it is the answer for each task record it carries.
     * A record the KPL gives no answer for within the bound counts as failed by the producer, and
     * its KPL future is cancelled, which gives its room under the queue limit back.
     */
    void track(ListenableFuture<UserRecordResult> kplFuture, KplRecord record, SharedProducer producer) {
        synchronized (this) {
            added += record.count();
        }
        ListenableFuture<UserRecordResult> future = recordTimeoutMs > 0
            ? Futures.withTimeout(kplFuture, recordTimeoutMs, TimeUnit.MILLISECONDS, UNANSWERED) : kplFuture;
        Futures.addCallback(future, new FutureCallback<UserRecordResult>() {
            @Override
            public void onSuccess(UserRecordResult result) {
                countThrottles(result.getAttempts());
                String target = record.targetShard();
                boolean streamWentMissing = target != null && metMissingStream(result);
                if (target != null && (streamWentMissing || !target.equals(result.getShardId()))) {
                    misplaced(new Misplaced(record, result.getShardId(), streamWentMissing));
                } else {
                    completed(record.count(), 0, record.bytes());
                }
            }

            @Override
            public void onFailure(Throwable error) {
                if (error instanceof UserRecordFailedException) {
                    refused(record, producer, (UserRecordFailedException) error);
                } else if (recordTimeoutMs > 0
                        && (error instanceof TimeoutException || error instanceof FutureTimedOutException)) {
                    // The sink's bound or the KPL's own (the same UserRecordTimeoutInMillis), whichever fired first.
                    producerFailed(record.count(), new TimeoutException("the KPL gave no answer for a record of stream '"
                        + record.sent().stream() + "' within " + recordTimeoutMs + " ms (UserRecordTimeoutInMillis, by "
                        + "default RecordTtl + 2 x RequestTimeout + 30 s)"));
                } else {
                    producerFailed(record.count(), error);
                }
            }
        }, MoreExecutors.directExecutor());
    }

    /** Whether an attempt before the one that stored it found no such stream. */
    private static boolean metMissingStream(UserRecordResult result) {
        List<Attempt> attempts = result.getAttempts();
        for (int i = 0; i < attempts.size() - 1; i++) {
            if (STREAM_NOT_FOUND.equals(attempts.get(i).getErrorCode())) {
                return true;
            }
        }
        return false;
    }

    private synchronized void countThrottles(List<Attempt> attempts) {
        throttledAttempts += throttles(attempts);
    }

    /** How many of a record's attempts Kinesis throttled. */
    static long throttles(List<Attempt> attempts) {
        return attempts.stream().filter(attempt -> THROTTLED.equals(attempt.getErrorCode())).count();
    }

    /**
     * Kinesis finally refused the record: a failure of each task record it carries, unless it only starved
     * at its shard's throughput, whose records the task sends again.
     */
    private void refused(KplRecord record, SharedProducer producer, UserRecordFailedException error) {
        List<Attempt> attempts = error.getResult().getAttempts();
        countThrottles(attempts);
        if (resendsStarved && starvedAtThroughput(attempts)) {
            starved(new Starved(record, producer));
            return;
        }
        List<TaskRecord> carried;
        try {
            carried = record.carried();
        } catch (RuntimeException e) {
            // Unhandled here it would vanish on the KPL's thread, and the task would wait out ackTimeoutMs.
            cannotAccount(new IOException("Kinesis finally failed an aggregate of " + record.count() + " records for stream '"
                + record.sent().stream() + "' (" + failure(record.sent(), 0, error).errorCode() + "), and reading its "
                + "records back failed: " + e.getMessage() + ". Which rows they were is unknown, so the task fails for "
                + "Spark to retry it", e));
            return;
        }
        carried.forEach(inside -> failures.add(failure(inside.record(), inside.rowNumber(), error)));
        completed(0, record.count(), 0);
    }

    /**
     * Whether the KPL gave up on a record at RecordTtl after Kinesis refused each of its attempts, at least one,
     * for the shard's throughput: every attempt an explicit refusal of that record, so it was never stored. An
     * attempt that timed out, met a network error or any other answer may have stored it.
     */
    static boolean starvedAtThroughput(List<Attempt> attempts) {
        if (attempts.size() < 2 || !EXPIRED.equals(attempts.get(attempts.size() - 1).getErrorCode())) {
            return false;
        }
        for (Attempt attempt : attempts.subList(0, attempts.size() - 1)) {
            if (!THROTTLED.equals(attempt.getErrorCode())) {
                return false;
            }
        }
        return true;
    }

    private synchronized void starved(Starved record) {
        starved.add(record);
        notifyAll();
    }

    /**
     * The records that starved at their shard's throughput in {@code producer}, for the task's own thread to
     * send again: they no longer count as added until then.
     */
    List<KplRecord> takeStarved(SharedProducer producer) {
        if (starved.isEmpty()) { // the task's thread asks at every row
            return List.of();
        }
        List<KplRecord> taken = new ArrayList<>();
        for (Iterator<Starved> it = starved.iterator(); it.hasNext(); ) {
            Starved next = it.next();
            if (next.producer() == producer) {
                it.remove();
                taken.add(next.record());
            }
        }
        taken.forEach(this::sendingAgain);
        return taken;
    }

    private synchronized void cannotAccount(IOException error) {
        if (taskFailure == null) {
            taskFailure = error;
        }
        notifyAll();
    }

    private static ScheduledExecutorService unansweredTimer() {
        ScheduledThreadPoolExecutor timer =
            new ScheduledThreadPoolExecutor(1, OffTaskThread.daemonThreads("spark-kpl-unanswered-records"));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    private synchronized void misplaced(Misplaced aggregate) {
        misplaced.add(aggregate);
        notifyAll();
    }

    /** The next misplaced aggregate not yet settled, or null; for the task's own thread. */
    public Misplaced pollMisplaced() {
        return misplaced.poll();
    }

    /**
     * Settles a misplaced aggregate: its records count as written if a consumer keeps them where
     * they were stored, else they no longer count as added, since the task sends them again.
     */
    public synchronized void settleMisplaced(Misplaced aggregate, boolean kept) {
        if (kept) {
            completed(aggregate.record().count(), 0, aggregate.record().bytes());
        } else {
            sendingAgain(aggregate.record());
        }
    }

    /** The record's task records no longer count as added: the task groups them again and adds them anew. */
    private synchronized void sendingAgain(KplRecord record) {
        added -= record.count();
        resent += record.count();
    }

    private synchronized void completed(int succeededNow, int failedNow, long bytes) {
        succeeded += succeededNow;
        failed += failedNow;
        bytesSucceeded += bytes;
        if (succeededNow > 0) {
            kinesisRecordsSucceeded++;
        }
        notifyAll();
    }

    private synchronized void producerFailed(int records, Throwable error) {
        inDoubt += records;
        if (producerFailure == null) {
            producerFailure = error;
        }
        notifyAll();
    }

    /**
     * @throws ProducerFailedException once the producer failed any of this task's records, saying
     *     how many are in doubt
     * @throws IOException once the task cannot tell which of its rows a failure concerns
     */
    public synchronized void throwIfProducerFailed() throws IOException {
        if (taskFailure != null) {
            throw taskFailure;
        }
        if (producerFailure != null) {
            throw new ProducerFailedException(inDoubt, added, producerFailure);
        }
    }

    /**
     * Kinesis's error code and message from the last attempt, which is why the record finally
     * failed, and the other errors its attempts met ("Expired" alone would hide the cause).
     */
    static FailedRecord failure(KinesisRecord record, long rowNumber, Throwable error) {
        List<Attempt> attempts = ((UserRecordFailedException) error).getResult().getAttempts();
        if (attempts.isEmpty()) {
            return new FailedRecord(record, rowNumber, null, error.getClass().getSimpleName(), String.valueOf(error));
        }
        Attempt last = attempts.get(attempts.size() - 1);
        Set<String> earlier = new LinkedHashSet<>();
        for (Attempt attempt : attempts.subList(0, attempts.size() - 1)) {
            earlier.add(attempt.getErrorCode() + ": " + attempt.getErrorMessage());
        }
        String message = last.getErrorMessage() + " (after " + attempts.size() + " attempts"
            + (earlier.isEmpty() ? "" : "; earlier: " + String.join("; ", earlier)) + ")";
        return new FailedRecord(record, rowNumber, null, last.getErrorCode(), message);
    }

    /** The next final failure not yet taken, or null; for the task's own thread. */
    public FailedRecord pollFailure() {
        return failures.poll();
    }

    /**
     * Blocks until every record this task added is acknowledged or finally failed, or until the
     * producer failed one of them (the task fails then: see {@link #throwIfProducerFailed}), flushing again
     * after 1, 2, 4 ... ms (then every {@value #MAX_REFLUSH_MS} ms) meanwhile. The KPL's flush only
     * reaches records its aggregator has already handed on; records still on their way through the
     * daemon's pipeline would otherwise wait out RecordMaxBufferedTime, which many small tasks pay one
     * after the other (docs/performance.md, "Figures behind the code's choices").
     *
     * <p>It returns early, with false, when Kinesis stored an aggregate of the task's in a shard
     * other than its target, or a record starved at its shard's throughput: the task settles it
     * ({@link #pollMisplaced}, {@link #takeStarved}) and waits again.
     *
     * @param flush sends what the KPL still buffers, unless the producer flushed within its pacing
     *     ({@link FlushPacing}): the clock here only says when to ask
     * @param onAcknowledgement run, outside the lock, after a wake-up that did not end the wait: a paced
     *     flush for the tasks committing later ({@link FlushPacing}), never a flush per acknowledgement
     * @return true once every record is acknowledged, finally failed, or the producer failed
     * @throws TimeoutException saying how many of this task's records are still outstanding
     */
    public boolean awaitAll(Runnable flush, Runnable onAcknowledgement, long timeoutMs)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long nextFlush = System.nanoTime();
        long pauseMs = 1;
        boolean woken = false;
        while (true) {
            // By the clock, not per wake-up: every acknowledgement wakes the task, and the daemon's flush
            // visits every shard it has met, so a flush each time made a commit cost shards squared.
            if (System.nanoTime() - nextFlush >= 0) {
                flush.run();
                nextFlush = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMs);
                pauseMs = Math.min(2 * pauseMs, MAX_REFLUSH_MS);
            } else if (woken) {
                onAcknowledgement.run();
            }
            synchronized (this) {
                if (needsTheTask()) {
                    return nothingToResend();
                }
                long now = System.nanoTime();
                if (deadline - now <= 0) {
                    throw new TimeoutException((added - succeeded - failed - inDoubt) + " of this task's " + added
                        + " records were still not acknowledged by Kinesis after " + timeoutMs + " ms");
                }
                TimeUnit.NANOSECONDS.timedWait(this, Math.min(deadline, nextFlush) - now);
                if (needsTheTask()) {
                    return nothingToResend();
                }
                woken = true;
            }
        }
    }

    /** Whether waiting is over: all settled, the producer failed, or a record is the task's to settle or send again. */
    private boolean needsTheTask() {
        return !nothingToResend() || producerFailure != null || taskFailure != null || succeeded + failed >= added;
    }

    private boolean nothingToResend() {
        return misplaced.isEmpty() && starved.isEmpty();
    }

    public synchronized long added() {
        return added;
    }

    /** Records added that Kinesis has not answered for yet. */
    public synchronized long unanswered() {
        return added - succeeded - failed;
    }

    public synchronized long succeeded() {
        return succeeded;
    }

    public synchronized long bytesSucceeded() {
        return bytesSucceeded;
    }

    public synchronized long resent() {
        return resent;
    }

    public synchronized long kinesisRecordsSucceeded() {
        return kinesisRecordsSucceeded;
    }

    public synchronized long throttledAttempts() {
        return throttledAttempts;
    }
}
