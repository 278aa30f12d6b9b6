package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/** The queue limits on a producer's outstanding records and bytes, without a KPL: acknowledgements are releases. */
public class OutstandingLimitTest {
    private static final Runnable NO_FLUSH = () -> { };
    private static final long ONE_SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final Lane LANE = new Lane("s", "shardId-0");
    /** An answer that waited in a queue, as at a shard's quota: slow start grows by what it acknowledges alone. */
    private static final long QUEUED = ONE_SECOND;

    @Test
    public void roomIsRefusedAtEitherCapAndComesBackWithAReleasedRecord() {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(2, 100));
        TaskQueueStats stats = new TaskQueueStats();

        assertTrue(limit.tryAcquire(LANE, 1, 40, stats));
        assertFalse("over the byte cap", limit.tryAcquire(LANE, 1, 61, stats));
        assertTrue(limit.tryAcquire(LANE, 1, 60, stats));
        assertFalse("over the record cap", limit.tryAcquire(LANE, 1, 1, stats));
        limit.release(LANE, 1, 40);

        assertTrue(limit.tryAcquire(LANE, 1, 40, stats));
        assertEquals(new OutstandingLimit.Usage(2, 100, 2, 100, 2, 100, 1), limit.usage());
        assertEquals(2, stats.peakOutstandingRecords());
    }

    @Test
    public void aRecordLargerThanTheByteCapIsAdmittedAloneRatherThanNever() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(10, 100));
        TaskQueueStats stats = new TaskQueueStats();

        limit.acquire(LANE, 1, 1_000, NO_FLUSH, ONE_SECOND, stats);

        assertEquals(1, limit.usage().records());
        assertEquals(0, stats.backpressureCycles());
    }

    @Test
    public void aWaitFlushesTheProducerAndTimesOutSayingWhatIsOutstanding() {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(LANE, 1, 10, stats));
        List<Long> flushes = new ArrayList<>();

        TimeoutException timeout = assertThrows(TimeoutException.class,
            () -> limit.acquire(LANE, 1, 10, () -> flushes.add(System.nanoTime()), TimeUnit.MILLISECONDS.toNanos(700), stats));

        assertTrue(timeout.getMessage(), timeout.getMessage().contains("with 1 records (10 bytes) outstanding"));
        assertTrue("flushed on entering the wait and again every 500 ms", flushes.size() >= 2);
    }

    /** The flush runs without the lock: room given back meanwhile must not leave the task asleep until its re-flush. */
    @Test
    public void roomReleasedDuringTheFlushIsTakenAtOnce() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(LANE, 1, 10, stats));
        AtomicInteger flushes = new AtomicInteger();

        limit.acquire(LANE, 1, 10, () -> {
            flushes.incrementAndGet();
            limit.release(LANE, 1, 10);
        }, 10 * ONE_SECOND, stats);

        assertEquals("admitted after the first flush, not at the 500 ms re-flush", 1, flushes.get());
    }

    @Test
    public void aBlockedRecordIsAdmittedWhenAnAcknowledgementReleasesRoom() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(LANE, 1, 10, stats));
        Thread acknowledger = new Thread(() -> {
            sleepMs(100);
            limit.release(LANE, 1, 10);
        });
        acknowledger.start();

        limit.acquire(LANE, 1, 10, NO_FLUSH, 5 * ONE_SECOND, stats);

        assertEquals(1, stats.backpressureCycles());
        assertTrue(stats.blockedMs() >= 50);
        acknowledger.join();
    }

    /**
     * Eight writers of 10-byte records keep a 1,000-byte cap full, as tasks of small records do, while
     * Kinesis acknowledges one record a millisecond. A 950-byte record needs the cap nearly empty
     * (95 ms without a new small record): without first come, first served, every 10 bytes freed go
     * to a waiting small record at once, for ever.
     */
    @Test
    public void aLargeRecordIsNotStarvedBySmallOnes() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(1_000_000, 1_000));
        BlockingQueue<Object> added = new LinkedBlockingQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            threads.add(new Thread(() -> {
                TaskQueueStats stats = new TaskQueueStats();
                while (running.get()) {
                    try {
                        limit.acquire(LANE, 1, 10, NO_FLUSH, 10 * ONE_SECOND, stats);
                    } catch (InterruptedException | TimeoutException e) {
                        return;
                    }
                    added.add(Boolean.TRUE);
                }
            }));
        }
        threads.add(new Thread(() -> acknowledgeOneAMillisecond(limit, added, running)));
        threads.forEach(Thread::start);
        sleepMs(200); // the small writers fill the cap

        try {
            limit.acquire(LANE, 1, 950, NO_FLUSH, 3 * ONE_SECOND, new TaskQueueStats());
        } finally {
            running.set(false);
            limit.release(LANE, 1, 950);
            for (Thread thread : threads) {
                thread.interrupt(); // a writer may be waiting for room that nobody releases any more
                thread.join(5_000);
            }
        }
    }

    /**
     * Ten shards each take 1 MB a second, one of them from a hot key. Measured over the whole producer, the
     * rate is 10 MB/s, and the hot shard could hold a target wait's worth of it, 20 MB, which it needs 20 s
     * to drain. Per lane it holds 2 MB, whatever its neighbours drain.
     */
    @Test
    public void aHotShardHoldsWhatItDrainsInTheTargetWaitWhateverItsNeighboursDrain() {
        long[] now = {0};
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.following(100_000, 64_000_000, 30_000),
            () -> now[0]);
        List<Lane> lanes = new ArrayList<>();
        for (int shard = 0; shard < 10; shard++) {
            lanes.add(new Lane("s", "shardId-" + shard));
        }
        TaskQueueStats stats = new TaskQueueStats();
        for (int tenth = 0; tenth < 30; tenth++) { // three seconds, a task waiting for room in each lane
            for (Lane lane : lanes) {
                assertTrue(limit.tryAcquire(lane, 100, 100_000, stats));
                assertThrows(TimeoutException.class, () -> limit.acquire(lane, 1, 64_000_000, NO_FLUSH, 1, stats));
            }
            now[0] += ONE_SECOND / 10;
            lanes.forEach(lane -> limit.acknowledged(lane, 100, 100_000, QUEUED, false));
        }

        Lane hot = lanes.get(0);
        assertTrue(limit.tryAcquire(hot, 1, 1_500_000, stats));
        assertFalse("about 2 MB for the hot shard: " + limit.usage(), limit.tryAcquire(hot, 1, 600_000, stats));
    }

    @Test
    public void aRecordForAColdShardDoesNotWaitBehindOneWaitingForAHotShard() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.following(100_000, 64_000_000, 30_000));
        Lane hot = new Lane("s", "shardId-hot");
        Lane cold = new Lane("s", "shardId-cold");
        assertTrue("a new shard's whole budget", limit.tryAcquire(hot, 100_000 / DrainBudget.START_SHARE, 10,
            new TaskQueueStats()));
        Thread waitingForHot = new Thread(() -> {
            try {
                limit.acquire(hot, 1, 10, NO_FLUSH, 10 * ONE_SECOND, new TaskQueueStats());
            } catch (InterruptedException | TimeoutException e) {
                Thread.currentThread().interrupt();
            }
        });
        waitingForHot.start();
        sleepMs(50); // the hot record waits: its shard holds its budget of one record

        limit.acquire(cold, 1, 10, NO_FLUSH, 5 * ONE_SECOND, new TaskQueueStats()); // behind the hot one: never

        limit.release(hot, 100_000 / DrainBudget.START_SHARE, 10);
        waitingForHot.join(5_000);
        assertFalse(waitingForHot.isAlive());
    }

    /**
     * A record waits for the queue limits with room in its lane; then its lane's first measurement shrinks the lane's
     * budget below what it holds. Room under the queue limits must go to a record of another lane, not wait behind it.
     */
    @Test
    public void aRecordWhoseLaneLostItsRoomDoesNotHoldTheCapsQueue() throws Exception {
        long[] now = {0};
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.following(100_000, 16L << 20, 30_000),
            () -> now[0]);
        Lane shrinking = new Lane("s", "shardId-shrinking");
        Lane full = new Lane("s", "shardId-full");
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue("within a new lane's budget", limit.tryAcquire(shrinking, 60, 60, stats));
        assertTrue("the rest of the queue limits", limit.tryAcquire(full, 100_000 - 60, 100_000 - 60, stats));
        Thread waitingForCaps = new Thread(() -> {
            try {
                limit.acquire(shrinking, 1, 1, NO_FLUSH, 10 * ONE_SECOND, new TaskQueueStats());
            } catch (InterruptedException | TimeoutException e) {
                Thread.currentThread().interrupt();
            }
        });
        waitingForCaps.start();
        sleepMs(50); // it waits for the queue limits: its lane has room for it
        now[0] += 2 * ONE_SECOND;
        limit.acknowledged(shrinking, 1, 1, QUEUED, false); // a window of almost nothing drained: the lane's budget falls to its floor

        try {
            limit.acquire(new Lane("s", "shardId-cold"), 1, 1, NO_FLUSH, 5 * ONE_SECOND, new TaskQueueStats());
        } finally {
            waitingForCaps.interrupt();
            waitingForCaps.join(5_000);
        }
    }

    @Test
    public void theCapsHoldOverEveryLaneTogether() {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.Policy.queueLimitsOnly(2, 1_000));
        TaskQueueStats stats = new TaskQueueStats();

        assertTrue(limit.tryAcquire(new Lane("s", "a"), 1, 10, stats));
        assertTrue(limit.tryAcquire(new Lane("s", "b"), 1, 10, stats));
        assertFalse("two records outstanding in all", limit.tryAcquire(new Lane("s", "c"), 1, 10, stats));
        assertEquals(3, limit.usage().lanes());
    }

    /** Releases the 10-byte records in the order they were added, one a millisecond. */
    private static void acknowledgeOneAMillisecond(OutstandingLimit limit, BlockingQueue<Object> added,
                                                   AtomicBoolean running) {
        while (running.get() || !added.isEmpty()) {
            try {
                if (added.poll(10, TimeUnit.MILLISECONDS) != null) {
                    Thread.sleep(1);
                    limit.release(LANE, 1, 10);
                }
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
