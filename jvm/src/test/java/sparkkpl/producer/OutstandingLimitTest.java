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
import org.junit.Test;

/** The cap on a producer's outstanding records and bytes, without a KPL: acknowledgements are releases. */
public class OutstandingLimitTest {
    private static final Runnable NO_FLUSH = () -> { };
    private static final long ONE_SECOND = TimeUnit.SECONDS.toNanos(1);

    @Test
    public void roomIsRefusedAtEitherCapAndComesBackWithAReleasedRecord() {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(2, 100));
        TaskQueueStats stats = new TaskQueueStats();

        assertTrue(limit.tryAcquire(1, 40, stats));
        assertFalse("over the byte cap", limit.tryAcquire(1, 61, stats));
        assertTrue(limit.tryAcquire(1, 60, stats));
        assertFalse("over the record cap", limit.tryAcquire(1, 1, stats));
        limit.release(1, 40);

        assertTrue(limit.tryAcquire(1, 40, stats));
        assertEquals(new OutstandingLimit.Usage(2, 100, 2, 100, 2, 100), limit.usage());
        assertEquals(2, stats.peakOutstandingRecords());
    }

    @Test
    public void aRecordLargerThanTheByteCapIsAdmittedAloneRatherThanNever() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(10, 100));
        TaskQueueStats stats = new TaskQueueStats();

        limit.acquire(1, 1_000, NO_FLUSH, ONE_SECOND, stats);

        assertEquals(1, limit.usage().records());
        assertEquals(0, stats.backpressureCycles());
    }

    @Test
    public void aWaitFlushesTheProducerAndTimesOutSayingWhatIsOutstanding() {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(1, 10, stats));
        List<Long> flushes = new ArrayList<>();

        TimeoutException timeout = assertThrows(TimeoutException.class,
            () -> limit.acquire(1, 10, () -> flushes.add(System.nanoTime()), TimeUnit.MILLISECONDS.toNanos(700), stats));

        assertTrue(timeout.getMessage(), timeout.getMessage().contains("with 1 records (10 bytes) outstanding"));
        assertTrue("flushed on entering the wait and again every 500 ms", flushes.size() >= 2);
    }

    @Test
    public void aTaskWokenByEveryAcknowledgementFlushesTheProducerAtMostOncePerSpacing() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(1, 10, stats));
        int wakeUps = 200;
        Thread acknowledger = new Thread(() -> {
            for (int i = 0; i < wakeUps; i++) { // acknowledgements of other tasks' records: no room for this one
                sleepMs(1);
                limit.release(0, 0);
            }
            limit.release(1, 10);
        });
        List<Long> flushes = new ArrayList<>();
        long start = System.nanoTime();
        acknowledger.start();

        limit.acquire(1, 10, () -> flushes.add(System.nanoTime()), 10 * ONE_SECOND, stats);

        long spacings = (System.nanoTime() - start) / OutstandingLimit.FLUSH_SPACING_NANOS;
        assertTrue(flushes.size() + " flushes in " + wakeUps + " wake-ups over " + spacings + " spacings",
            flushes.size() >= 1 && flushes.size() <= spacings + 1);
        acknowledger.join();
    }

    @Test
    public void aBlockedRecordIsAdmittedWhenAnAcknowledgementReleasesRoom() throws Exception {
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(1, 100));
        TaskQueueStats stats = new TaskQueueStats();
        assertTrue(limit.tryAcquire(1, 10, stats));
        Thread acknowledger = new Thread(() -> {
            sleepMs(100);
            limit.release(1, 10);
        });
        acknowledger.start();

        limit.acquire(1, 10, NO_FLUSH, 5 * ONE_SECOND, stats);

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
        OutstandingLimit limit = new OutstandingLimit(DrainBudget.fixed(1_000_000, 1_000));
        BlockingQueue<Object> added = new LinkedBlockingQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            threads.add(new Thread(() -> {
                TaskQueueStats stats = new TaskQueueStats();
                while (running.get()) {
                    try {
                        limit.acquire(1, 10, NO_FLUSH, 10 * ONE_SECOND, stats);
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
            limit.acquire(1, 950, NO_FLUSH, 3 * ONE_SECOND, new TaskQueueStats());
        } finally {
            running.set(false);
            limit.release(1, 950);
            for (Thread thread : threads) {
                thread.interrupt(); // a writer may be waiting for room that nobody releases any more
                thread.join(5_000);
            }
        }
    }

    /** Releases the 10-byte records in the order they were added, one a millisecond. */
    private static void acknowledgeOneAMillisecond(OutstandingLimit limit, BlockingQueue<Object> added,
                                                   AtomicBoolean running) {
        while (running.get() || !added.isEmpty()) {
            try {
                if (added.poll(10, TimeUnit.MILLISECONDS) != null) {
                    Thread.sleep(1);
                    limit.release(1, 10);
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
