package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.google.common.util.concurrent.SettableFuture;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;
import software.amazon.kinesis.producer.Attempt;
import software.amazon.kinesis.producer.FutureTimedOutException;
import software.amazon.kinesis.producer.KinesisProducerException;
import software.amazon.kinesis.producer.UserRecordFailedException;
import software.amazon.kinesis.producer.UserRecordResult;
import sparkkpl.failures.FailedRecord;
import sparkkpl.kinesis.KinesisRecord;

/** One task's acknowledgements, fed with the futures the KPL would complete. */
public class TaskAcksTest {
    /** No paced flush at acknowledgements; acknowledgementsDoNotAddFlushes passes one of its own. */
    private static final Runnable NO_PACED_FLUSH = () -> { };
    private final TaskAcks acks = new TaskAcks();

    @Test
    public void awaitAllReturnsOnceEveryRecordIsAcknowledgedAndFlushesMeanwhile() throws Exception {
        SettableFuture<UserRecordResult> first = track(1);
        SettableFuture<UserRecordResult> second = track(2);
        AtomicInteger flushes = new AtomicInteger();
        Thread kinesis = new Thread(() -> {
            first.set(success());
            sleepMs(100);
            second.set(success());
        });
        kinesis.start();

        assertTrue(acks.awaitAll(flushes::incrementAndGet, NO_PACED_FLUSH, 5_000));

        assertEquals(2, acks.succeeded());
        assertEquals(2 * 3, acks.bytesSucceeded());
        assertTrue("re-flushed after 1, 2, 4 ... ms while waiting, got " + flushes, flushes.get() >= 4);
        kinesis.join();
    }

    /**
     * The daemon's flush visits every shard it has met (4,096 at 4,096 shards), so a flush per
     * acknowledgement made a commit cost shards squared: the schedule of 1, 2, 4 ... ms holds however
     * many acknowledgements wake the task, which ask for a flush that {@link FlushPacing} spaces.
     */
    @Test
    public void acknowledgementsDoNotAddFlushes() throws Exception {
        int records = 2_000;
        List<SettableFuture<UserRecordResult>> futures = new ArrayList<>();
        for (int row = 1; row <= records; row++) {
            futures.add(track(row));
        }
        AtomicInteger flushes = new AtomicInteger();
        AtomicInteger pacedFlushes = new AtomicInteger();
        Thread kinesis = new Thread(() -> {
            for (SettableFuture<UserRecordResult> future : futures) {
                future.set(success());
                sleepMs(future.hashCode() % 4 == 0 ? 1 : 0);
            }
        });
        long started = System.nanoTime();
        kinesis.start();

        assertTrue(acks.awaitAll(flushes::incrementAndGet, pacedFlushes::incrementAndGet, 30_000));

        assertTrue("acknowledgements ask for a paced flush instead, got " + pacedFlushes, pacedFlushes.get() > 10);
        long waitedMs = (System.nanoTime() - started) / 1_000_000;
        long scheduled = 2 + 64 - Long.numberOfLeadingZeros(waitedMs + 1); // 1, 2, 4 ... ms, then every 500
        assertTrue(flushes + " flushes over " + records + " acknowledgements in " + waitedMs + " ms",
            flushes.get() <= scheduled + waitedMs / 500);
        kinesis.join();
    }

    @Test
    public void awaitAllTimesOutSayingHowManyRecordsAreStillOutstanding() {
        track(1).set(success());
        track(2);
        track(3);

        TimeoutException timeout = assertThrows(TimeoutException.class, () -> acks.awaitAll(() -> { }, NO_PACED_FLUSH, 200));

        assertTrue(timeout.getMessage(), timeout.getMessage().startsWith("2 of this task's 3 records were still not"));
    }

    @Test
    public void aRecordKinesisRefusedIsARecordFailureWithItsAttempts() throws Exception {
        // Attempt(delay, duration, error message, error code, successful)
        track(7).setException(new UserRecordFailedException(new UserRecordResult(List.of(
            new Attempt(0, 10, "slow down", "Throttled", false),
            new Attempt(0, 10, "Record has reached expiration", "Expired", false)), null, null, false)));

        acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000);
        acks.throwIfProducerFailed();
        FailedRecord failure = acks.pollFailure();

        assertEquals(7, failure.rowNumber());
        assertEquals("Expired", failure.errorCode());
        assertEquals("Record has reached expiration (after 2 attempts; earlier: Throttled: slow down)",
            failure.errorMessage());
        assertNull(acks.pollFailure());
    }

    /** Refused for its shard's throughput in every attempt until RecordTtl: never stored, so the task's to send again. */
    @Test
    public void aRecordThatStarvedAtItsShardsThroughputGoesAgainRatherThanFailing() throws Exception {
        track(1).set(success());
        track(2).setException(starved("ProvisionedThroughputExceededException", "ProvisionedThroughputExceededException"));

        assertFalse("the task has a record to send again", acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));
        acks.throwIfProducerFailed();
        assertNull("no record failure", acks.pollFailure());
        List<KplRecord> again = acks.takeStarved(null);

        assertEquals(List.of(2L), again.stream().flatMap(r -> r.carried().stream()).map(TaskRecord::rowNumber).toList());
        assertEquals(List.of(), acks.takeStarved(null));
        assertEquals("it counts as added again once sent", 1, acks.added());
        assertEquals(1, acks.resent());
        assertEquals(2, acks.throttledAttempts());
        assertTrue(acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));
    }

    /** An attempt that met anything but a throughput refusal may have stored the record: it fails as Kinesis said. */
    @Test
    public void aRecordWithAnyOtherAttemptFailsEvenIfItWasThrottledToo() throws Exception {
        track(3).setException(starved("ProvisionedThroughputExceededException", "Exception"));

        acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000);

        assertEquals(3, acks.pollFailure().rowNumber());
        assertEquals(List.of(), acks.takeStarved(null));
    }

    /** ordering=key: the records behind it in its shard went on once it was answered, so it may not go after them. */
    @Test
    public void inKeyOrderAStarvedRecordFails() throws Exception {
        TaskAcks inKeyOrder = new TaskAcks(0, false);
        SettableFuture<UserRecordResult> future = SettableFuture.create();
        inKeyOrder.track(future, KplRecord.alone(taskRecord(4)), null);
        future.setException(starved("ProvisionedThroughputExceededException"));

        assertTrue(inKeyOrder.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));

        assertEquals("Expired", inKeyOrder.pollFailure().errorCode());
        assertEquals(List.of(), inKeyOrder.takeStarved(null));
    }

    /** The KPL's answer for a record it gave up on at RecordTtl: the given attempts, then its own "Expired". */
    private static UserRecordFailedException starved(String... earlierErrorCodes) {
        List<Attempt> attempts = new ArrayList<>();
        for (String code : earlierErrorCodes) {
            attempts.add(new Attempt(0, 10, "refused", code, false));
        }
        attempts.add(new Attempt(0, 0, "Record has reached expiration", "Expired", false));
        return new UserRecordFailedException(new UserRecordResult(attempts, null, null, false));
    }

    /** A dead daemon fails every outstanding record: nobody knows whether they arrived. */
    @Test
    public void aProducerFailureIsNoRecordFailureButFailsTheTask() throws Exception {
        track(1).set(success());
        track(2).setException(new KinesisProducerException(new RuntimeException("Child process exited with code 137"),
            null));
        track(3);

        acks.awaitAll(() -> { }, NO_PACED_FLUSH, 5_000); // returns without waiting for record 3: the task fails anyway

        assertNull("not a record failure for failOnError=false to count", acks.pollFailure());
        ProducerFailedException failed = assertThrows(ProducerFailedException.class, acks::throwIfProducerFailed);
        assertTrue(failed.getMessage(), failed.getMessage().startsWith("The KPL producer failed at least 1 of this task's 3 records"));
        assertTrue(failed.getMessage(), failed.getMessage().contains("whatever failOnError says"));
    }

    /** One aggregate, one future: its answer is each carried record's, row by row. */
    @Test
    public void anAggregatesAnswerCountsForEveryRecordItCarries() {
        SettableFuture<UserRecordResult> delivered = SettableFuture.create();
        SettableFuture<UserRecordResult> refused = SettableFuture.create();
        acks.track(delivered, aggregate(null, 1, 2, 3), null);
        acks.track(refused, aggregate(null, 4, 5), null);

        delivered.set(success());
        refused.setException(new UserRecordFailedException(new UserRecordResult(List.of(
            new Attempt(0, 10, "Record has reached expiration", "Expired", false)), null, null, false)));

        assertEquals(3, acks.succeeded());
        assertEquals(3 * 3, acks.bytesSucceeded());
        assertEquals(4, acks.pollFailure().rowNumber());
        assertEquals(5, acks.pollFailure().rowNumber());
        assertNull(acks.pollFailure());
    }

    @Test
    public void kinesisRecordsAreCountedOncePerAcknowledgedAggregateAndThrottlesPerAttempt() {
        SettableFuture<UserRecordResult> delivered = SettableFuture.create();
        SettableFuture<UserRecordResult> refused = SettableFuture.create();
        acks.track(delivered, aggregate(null, 1, 2, 3), null);
        acks.track(refused, aggregate(null, 4, 5), null);
        Attempt throttled = new Attempt(0, 10, "Rate exceeded for shard", "ProvisionedThroughputExceededException", false);

        delivered.set(new UserRecordResult(List.of(throttled, throttled, new Attempt(0, 10, "", "", true)), "1",
            "shardId-000000000000", true));
        refused.setException(new UserRecordFailedException(new UserRecordResult(List.of(
            throttled, new Attempt(0, 10, "Record has reached expiration", "Expired", false)), null, null, false)));

        assertEquals(1, acks.kinesisRecordsSucceeded());
        assertEquals(3, acks.throttledAttempts());
    }

    /** An aggregate built for shard 1 and stored there counts as written; stored in shard 3, it is the task's to settle. */
    @Test
    public void anAggregateStoredOutsideItsTargetShardWaitsForTheTaskToSettleIt() throws Exception {
        SettableFuture<UserRecordResult> home = SettableFuture.create();
        SettableFuture<UserRecordResult> away = SettableFuture.create();
        acks.track(home, aggregate(SHARD_1, 1, 2), null);
        acks.track(away, aggregate(SHARD_1, 3, 4, 5), null);
        home.set(storedIn(SHARD_1));
        away.set(storedIn("shardId-000000000003"));

        assertFalse("the task must look at the misplaced aggregate", acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));
        TaskAcks.Misplaced misplaced = acks.pollMisplaced();
        assertEquals("shardId-000000000003", misplaced.storedIn());
        assertEquals(3, misplaced.record().count());
        assertEquals(2, acks.succeeded());

        acks.settleMisplaced(misplaced, false);

        assertTrue("its records no longer count as added: they are sent again", acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));
        assertEquals(2, acks.succeeded());
        assertEquals(3, acks.resent());
    }

    @Test
    public void aMisplacedAggregateAConsumerKeepsCountsAsWritten() throws Exception {
        SettableFuture<UserRecordResult> away = SettableFuture.create();
        acks.track(away, aggregate(SHARD_1, 1, 2), null);
        away.set(storedIn("shardId-000000000003"));

        acks.settleMisplaced(acks.pollMisplaced(), true);

        assertTrue(acks.awaitAll(() -> { }, NO_PACED_FLUSH, 1_000));
        assertEquals(2, acks.succeeded());
        assertEquals(0, acks.resent());
    }

    /** A future the KPL never completes fails the task at the record's bound and gives its queue room back. */
    @Test
    public void aRecordTheKplNeverAnswersFailsTheTaskAtItsBoundAndFreesItsRoom() throws Exception {
        TaskAcks bounded = new TaskAcks(200, true);
        SettableFuture<UserRecordResult> lost = SettableFuture.create();
        AtomicInteger roomGivenBack = new AtomicInteger();
        lost.addListener(roomGivenBack::incrementAndGet, Runnable::run); // as SharedProducer.add does
        bounded.track(lost, KplRecord.alone(taskRecord(9)), null);

        assertTrue(bounded.awaitAll(() -> { }, NO_PACED_FLUSH, 10_000));

        ProducerFailedException failed = assertThrows(ProducerFailedException.class, bounded::throwIfProducerFailed);
        assertTrue(failed.getMessage(), failed.getMessage().contains(
            "the KPL gave no answer for a record of stream 's' within 200 ms"));
        // The timer fails the task first and cancels the KPL's future right after, on its own thread.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        while (roomGivenBack.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1, roomGivenBack.get());
    }

    @Test
    public void aRecordTheKplItselfTimedOutFailsTheTaskSayingSo() throws Exception {
        TaskAcks bounded = new TaskAcks(60_000, true);
        SettableFuture<UserRecordResult> lost = SettableFuture.create();
        bounded.track(lost, KplRecord.alone(taskRecord(9)), null);
        lost.setException(new FutureTimedOutException("Message id 5 timeout out", null));

        assertTrue(bounded.awaitAll(() -> { }, NO_PACED_FLUSH, 10_000));

        ProducerFailedException failed = assertThrows(ProducerFailedException.class, bounded::throwIfProducerFailed);
        assertTrue(failed.getMessage(), failed.getMessage().contains(
            "the KPL gave no answer for a record of stream 's' within 60000 ms"));
    }

    /** An aggregate Kinesis refused whose records cannot be read back fails the task at once, saying why. */
    @Test
    public void aFailedAggregateThatCannotBeReadBackFailsTheTaskAtOnce() throws Exception {
        SettableFuture<UserRecordResult> refused = SettableFuture.create();
        acks.track(refused, KplRecord.aggregate(new KinesisRecord("s", "a", "1", new byte[10]), new long[] {1, 2}, 6,
            null, aggregate -> {
                throw new IllegalArgumentException("not an aggregated record: it does not start with the magic bytes");
            }), null);
        refused.setException(new UserRecordFailedException(new UserRecordResult(List.of(
            new Attempt(0, 10, "Record has reached expiration", "Expired", false)), null, null, false)));

        assertTrue(acks.awaitAll(() -> { }, NO_PACED_FLUSH, 10_000));

        IOException failed = assertThrows(IOException.class, acks::throwIfProducerFailed);
        assertTrue(failed.getMessage(), failed.getMessage().contains("Kinesis finally failed an aggregate of 2 "
            + "records for stream 's' (Expired), and reading its records back failed: not an aggregated record"));
    }

    private static final String SHARD_1 = "shardId-000000000001";

    private static KplRecord aggregate(String targetShard, long... rows) {
        List<KinesisRecord> inside = new ArrayList<>();
        for (long row : rows) {
            inside.add(taskRecord(row).record());
        }
        return KplRecord.aggregate(new KinesisRecord("s", "a", "1", new byte[10]), rows, 3L * rows.length, targetShard,
            aggregate -> inside);
    }

    private static UserRecordResult storedIn(String shardId) {
        return new UserRecordResult(List.of(new Attempt(0, 10, "", "", true)), "1", shardId, true);
    }

    private static TaskRecord taskRecord(long row) {
        return new TaskRecord(new KinesisRecord("s", "key-" + row, null, "abc".getBytes(StandardCharsets.UTF_8)), row, 3);
    }

    private SettableFuture<UserRecordResult> track(long row) {
        SettableFuture<UserRecordResult> future = SettableFuture.create();
        KinesisRecord record = new KinesisRecord("s", "key", null, "abc".getBytes(StandardCharsets.UTF_8));
        acks.track(future, KplRecord.alone(new TaskRecord(record, row, 3)), null);
        return future;
    }

    private static UserRecordResult success() {
        return new UserRecordResult(List.of(new Attempt(0, 10, "", "", true)), "1", "shardId-000000000000", true);
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
