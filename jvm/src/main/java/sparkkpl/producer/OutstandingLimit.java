package sparkkpl.producer;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Caps the records and bytes a producer has outstanding (added, not yet acknowledged). The KPL's
 * own queue is unbounded (FLINK-9374), so a task that would go over the cap flushes the producer
 * and blocks until acknowledgements bring it back under: backpressure instead of unbounded memory.
 *
 * <p>Within the caps, what a task may add follows what Kinesis takes ({@link DrainBudget}), so that a
 * record's wait stays well inside {@code RecordTtl} at a stream's quota.
 *
 * <p>Room is given first come, first served: while a record waits, later ones wait behind it, so a
 * large record is not starved by small ones that would each fit into the room it waits for.
 */
final class OutstandingLimit {
    /** How often a blocked task re-flushes, in case records arrived in the KPL's buffers meanwhile. */
    private static final long REFLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /**
     * The least time between two flushes of the producer by waiting tasks: the KPL's default
     * RecordMaxBufferedTime, after which its collector sends what it holds anyway. Every
     * acknowledgement wakes the waiting tasks, and the daemon's flush visits each shard it has seen
     * (one aggregator per shard, about 1 µs each): flushing at every wake-up took the daemon's main
     * thread 13 µs per row at 1,024 shards against 1.6 at 8, and every 25 ms still 37 µs per row at
     * 4,096 shards (bench/shards.py).
     */
    static final long FLUSH_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final DrainBudget budget;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    /** One ticket per waiting record, in arrival order; only the first may take room. */
    private final Deque<Object> waiting = new ArrayDeque<>();
    private long records;
    private long bytes;
    private long peakRecords;
    private long peakBytes;
    /** When a waiting task last flushed the producer. */
    private long flushedAtNanos;

    OutstandingLimit(DrainBudget budget) {
        this.budget = budget;
        this.flushedAtNanos = System.nanoTime() - FLUSH_SPACING_NANOS;
    }

    /** Reserves room for {@code count} records of {@code size} bytes in all if there is some now; never blocks. */
    boolean tryAcquire(long count, long size, TaskQueueStats stats) {
        lock.lock();
        try {
            if (!waiting.isEmpty() || !hasRoomFor(count, size)) {
                return false;
            }
            reserve(count, size);
            stats.admitted(0, records, bytes);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reserves room for {@code count} records of {@code size} bytes in all (one record, or the
     * records of one aggregate), blocking while the cap would be exceeded. What is larger than the
     * whole cap is admitted once nothing else is outstanding, so it cannot wait forever.
     *
     * @param flush asks the KPL to send what it buffers, so that acknowledgements come sooner
     * @param stats the calling task's record of waits and peaks
     * @throws TimeoutException when no room came within {@code timeoutNanos}
     */
    void acquire(long count, long size, Runnable flush, long timeoutNanos, TaskQueueStats stats)
            throws InterruptedException, TimeoutException {
        if (tryAcquire(count, size, stats)) {
            return;
        }
        Object ticket = new Object();
        lock.lock();
        try {
            waiting.add(ticket);
            long start = System.nanoTime();
            budget.bound(start);
            long deadline = start + timeoutNanos;
            while (waiting.peekFirst() != ticket || !hasRoomFor(count, size)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("the producer stayed at its queue limit for "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms with " + records + " records ("
                        + bytes + " bytes) outstanding, its budget " + budget.records() + " records ("
                        + budget.bytes() + " bytes); Kinesis is not acknowledging them");
                }
                flushThenWait(flush, left);
            }
            reserve(count, size);
            stats.admitted(Math.max(1, System.nanoTime() - start), records, bytes);
        } finally {
            waiting.remove(ticket);
            released.signalAll(); // the next in line may have room now
            lock.unlock();
        }
    }

    private boolean hasRoomFor(long count, long size) {
        if (records == 0) {
            return true;
        }
        return records + count <= budget.records() && bytes + size <= budget.bytes();
    }

    private void reserve(long count, long size) {
        records += count;
        bytes += size;
        peakRecords = Math.max(peakRecords, records);
        peakBytes = Math.max(peakBytes, bytes);
    }

    /** Gives back the room of records that will not be added, or that Kinesis finally failed. */
    void release(long count, long size) {
        lock.lock();
        try {
            records -= count;
            bytes -= size;
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Gives back the room of records Kinesis acknowledged; the budget follows their rate. */
    void acknowledged(long count, long size) {
        long now = System.nanoTime();
        lock.lock();
        try {
            records -= count;
            bytes -= size;
            budget.acknowledged(count, size, !waiting.isEmpty(), now);
            released.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Waits until nothing is outstanding or the time is up; returns the records still outstanding. */
    long awaitEmpty(Runnable flush, long timeoutNanos) throws InterruptedException {
        lock.lock();
        try {
            long deadline = System.nanoTime() + timeoutNanos;
            while (records > 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                flushThenWait(flush, left);
            }
            return records;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Called with the lock held; flushes (without the lock, since the KPL's flush may block briefly)
     * unless a waiting task did within {@link #FLUSH_SPACING_NANOS}, then waits for a release.
     */
    private void flushThenWait(Runnable flush, long leftNanos) throws InterruptedException {
        long now = System.nanoTime();
        if (now - flushedAtNanos >= FLUSH_SPACING_NANOS) {
            flushedAtNanos = now;
            lock.unlock();
            try {
                flush.run();
            } finally {
                lock.lock();
            }
        }
        released.awaitNanos(Math.min(leftNanos, REFLUSH_NANOS));
    }

    /** Outstanding now and at the peak since the producer started, and the budget now. */
    record Usage(long records, long bytes, long peakRecords, long peakBytes, long budgetRecords, long budgetBytes) {}

    Usage usage() {
        lock.lock();
        try {
            return new Usage(records, bytes, peakRecords, peakBytes, budget.records(), budget.bytes());
        } finally {
            lock.unlock();
        }
    }
}
