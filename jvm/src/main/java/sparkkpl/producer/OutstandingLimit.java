package sparkkpl.producer;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Caps the records and bytes a producer has outstanding (added, not yet acknowledged). The KPL's
 * own queue is unbounded (FLINK-9374), so a task that would go over the cap flushes the producer
 * and blocks until acknowledgements bring it back under: backpressure instead of unbounded memory.
 *
 * <p>Within the queue limits, each {@link Lane} (a target shard, or a stream whose shard is not known) may hold
 * what Kinesis takes of it in a target wait ({@link DrainBudget}), so that a record's wait stays well
 * inside {@code RecordTtl} in a shard at its quota, however hot that shard is against the others.
 *
 * <p>Room is given first come, first served within a lane: while a record waits, later ones of its lane
 * wait behind it, so a large record is not starved by small ones that would each fit into the room it
 * waits for. A record of another lane does not wait behind it, unless the queue limits themselves are reached:
 * then the records whose lanes have room take the queue limits' room in the order they came.
 */
final class OutstandingLimit {
    /** How often a blocked task re-flushes, in case records arrived in the KPL's buffers meanwhile. */
    private static final long REFLUSH_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** A lane idle this long is forgotten (its budget starts again if it comes back): lanes stay bounded. */
    static final long FORGET_IDLE_LANE_NANOS = TimeUnit.MINUTES.toNanos(10);

    /** A record waiting for room. */
    private static final class Ticket {
        final LaneState lane;
        final long count;
        final long size;

        Ticket(LaneState lane, long count, long size) {
            this.lane = lane;
            this.count = count;
            this.size = size;
        }
    }

    /** What one lane has outstanding, its budget, and the records waiting for room in it. */
    private static final class LaneState {
        final DrainBudget budget;
        final Deque<Ticket> waiting = new ArrayDeque<>();
        long records;
        long bytes;
        long idleSince;

        LaneState(DrainBudget budget) {
            this.budget = budget;
        }

        /** Nothing outstanding lets any record in, so that a record larger than the budget cannot wait forever. */
        boolean hasRoomFor(long count, long size) {
            return records == 0 || (records + count <= budget.records() && bytes + size <= budget.bytes());
        }

        boolean isIdle() {
            return records == 0 && waiting.isEmpty();
        }
    }

    private final DrainBudget.Policy policy;
    private final LongSupplier nanoClock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition released = lock.newCondition();
    private final Map<Lane, LaneState> lanes = new HashMap<>();
    /** Records whose lane has room, waiting for room under the queue limits, in arrival order. */
    private final Deque<Ticket> waitingForCaps = new ArrayDeque<>();
    private long records;
    private long bytes;
    private long peakRecords;
    private long peakBytes;
    /**
     * How many times room was given back. A task lets the lock go while it flushes; room given back
     * meanwhile signals nobody, so the task compares this count instead of waiting for that signal.
     */
    private long releases;
    private long lastSweepNanos;

    OutstandingLimit(DrainBudget.Policy policy) {
        this(policy, System::nanoTime);
    }

    /** @param nanoClock the budgets' clock: tests give their own; waits take real time whatever it says */
    OutstandingLimit(DrainBudget.Policy policy, LongSupplier nanoClock) {
        this.policy = policy;
        this.nanoClock = nanoClock;
        this.lastSweepNanos = nanoClock.getAsLong();
    }

    /** Reserves room for {@code count} records of {@code size} bytes in all if there is some now; never blocks. */
    boolean tryAcquire(Lane lane, long count, long size, TaskQueueStats stats) {
        lock.lock();
        try {
            LaneState state = laneOf(lane);
            if (!state.waiting.isEmpty() || !waitingForCaps.isEmpty() || !state.hasRoomFor(count, size)
                    || !capsHaveRoomFor(count, size)) {
                return false;
            }
            reserve(state, count, size);
            stats.admitted(0, records, bytes);
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Reserves room for {@code count} records of {@code size} bytes in all (one record, or the
     * records of one aggregate) in {@code lane}, blocking while the lane's budget or the queue limits would be
     * exceeded. What is larger than the whole queue limit is admitted once nothing else is outstanding, so it
     * cannot wait forever.
     *
     * @param flush asks the KPL to send what it buffers, so that acknowledgements come sooner; called at
     *     every wake-up, so the caller spaces the flushes it makes
     * @param stats the calling task's record of waits and peaks
     * @throws TimeoutException when no room came within {@code timeoutNanos}
     */
    void acquire(Lane lane, long count, long size, Runnable flush, long timeoutNanos, TaskQueueStats stats)
            throws InterruptedException, TimeoutException {
        if (tryAcquire(lane, count, size, stats)) {
            return;
        }
        lock.lock();
        Ticket ticket = null;
        try {
            ticket = new Ticket(laneOf(lane), count, size);
            ticket.lane.waiting.add(ticket);
            long start = System.nanoTime();
            ticket.lane.budget.bound(nanoClock.getAsLong());
            long deadline = start + timeoutNanos;
            while (!admits(ticket)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException("the producer stayed at its queue limit for "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms with " + records + " records ("
                        + bytes + " bytes) outstanding, " + ticket.lane.records + " records (" + ticket.lane.bytes
                        + " bytes) of them in " + describe(lane) + " against its budget of "
                        + ticket.lane.budget.records() + " records (" + ticket.lane.budget.bytes()
                        + " bytes); Kinesis is not acknowledging them");
                }
                flushThenWait(flush, left);
            }
            reserve(ticket.lane, count, size);
            stats.admitted(Math.max(1, System.nanoTime() - start), records, bytes);
        } finally {
            if (ticket != null) {
                ticket.lane.waiting.remove(ticket);
                waitingForCaps.remove(ticket);
                settleIdle(ticket.lane);
            }
            signalRelease(); // the next in line may have room now
            lock.unlock();
        }
    }

    private static String describe(Lane lane) {
        return lane.isShard() ? "shard " + lane.shard() + " of stream '" + lane.stream() + "'"
            : "stream '" + lane.stream() + "'";
    }

    /**
     * Whether the ticket may take its room now: first of its lane, with room in the lane, and first of
     * those waiting for the queue limits with room in their lanes, with room under the queue limits. A ticket that waits for
     * the queue limits alone queues for them, so that a large record is not starved by small ones of other lanes;
     * one whose lane has lost its room since (its budget shrank) keeps its place without holding the others.
     */
    private boolean admits(Ticket ticket) {
        if (ticket.lane.waiting.peekFirst() != ticket || !ticket.lane.hasRoomFor(ticket.count, ticket.size)) {
            return false;
        }
        Ticket firstForCaps = firstWithLaneRoom();
        if (firstForCaps == ticket || firstForCaps == null) {
            if (capsHaveRoomFor(ticket.count, ticket.size)) {
                return true;
            }
        }
        if (!waitingForCaps.contains(ticket)) {
            waitingForCaps.add(ticket);
        }
        return false;
    }

    private Ticket firstWithLaneRoom() {
        for (Ticket waiting : waitingForCaps) {
            if (waiting.lane.hasRoomFor(waiting.count, waiting.size)) {
                return waiting;
            }
        }
        return null;
    }

    private boolean capsHaveRoomFor(long count, long size) {
        return records == 0 || (records + count <= policy.queueLimit() && bytes + size <= policy.queueLimitBytes());
    }

    private LaneState laneOf(Lane lane) {
        LaneState state = lanes.get(lane);
        if (state == null) {
            long now = nanoClock.getAsLong();
            forgetIdleLanes(now);
            state = new LaneState(policy.newLane());
            state.idleSince = now;
            lanes.put(lane, state);
        }
        return state;
    }

    /** At most once a minute, when a new lane comes: drops lanes idle for {@link #FORGET_IDLE_LANE_NANOS}. */
    private void forgetIdleLanes(long now) {
        if (now - lastSweepNanos < TimeUnit.MINUTES.toNanos(1)) {
            return;
        }
        lastSweepNanos = now;
        for (Iterator<LaneState> it = lanes.values().iterator(); it.hasNext(); ) {
            LaneState state = it.next();
            if (state.isIdle() && now - state.idleSince >= FORGET_IDLE_LANE_NANOS) {
                it.remove();
            }
        }
    }

    private void reserve(LaneState lane, long count, long size) {
        if (lane.records == 0) {
            lane.budget.busy(nanoClock.getAsLong());
        }
        lane.records += count;
        lane.bytes += size;
        records += count;
        bytes += size;
        peakRecords = Math.max(peakRecords, records);
        peakBytes = Math.max(peakBytes, bytes);
    }

    /** Gives back the room of records that will not be added, or that Kinesis finally failed. */
    void release(Lane lane, long count, long size) {
        lock.lock();
        try {
            LaneState state = unreserve(lane, count, size);
            settleIdle(state);
            signalRelease();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Gives back the room of records Kinesis acknowledged; their lane's budget follows their rate.
     *
     * @param latencyNanos from their add to the KPL to its answer
     * @param throttled whether Kinesis throttled an attempt of them
     */
    void acknowledged(Lane lane, long count, long size, long latencyNanos, boolean throttled) {
        lock.lock();
        try {
            LaneState state = unreserve(lane, count, size);
            state.budget.acknowledged(count, size, latencyNanos, throttled, !state.waiting.isEmpty(),
                nanoClock.getAsLong());
            settleIdle(state);
            signalRelease();
        } finally {
            lock.unlock();
        }
    }

    private LaneState unreserve(Lane lane, long count, long size) {
        LaneState state = laneOf(lane);
        state.records -= count;
        state.bytes -= size;
        records -= count;
        bytes -= size;
        return state;
    }

    /** A lane left with nothing outstanding and nobody waiting stops its budget's clock. */
    private void settleIdle(LaneState state) {
        if (state.isIdle()) {
            long now = nanoClock.getAsLong();
            state.budget.idle(now);
            state.idleSince = now;
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

    private void signalRelease() {
        releases++;
        released.signalAll();
    }

    /**
     * Called with the lock held: asks for a flush without the lock (the KPL's flush may block briefly),
     * then waits for a release, unless one came during the flush.
     */
    private void flushThenWait(Runnable flush, long leftNanos) throws InterruptedException {
        long releasesBefore = releases;
        lock.unlock();
        try {
            flush.run();
        } finally {
            lock.lock();
        }
        if (releases == releasesBefore) {
            released.awaitNanos(Math.min(leftNanos, REFLUSH_NANOS));
        }
    }

    /**
     * Outstanding now and at the peak since the producer started; the budget now: its lanes' budgets
     * added up, within the queue limits; and how many lanes it keeps.
     */
    record Usage(long records, long bytes, long peakRecords, long peakBytes, long budgetRecords, long budgetBytes,
                 int lanes) {}

    Usage usage() {
        lock.lock();
        try {
            long budgetRecords = 0;
            long budgetBytes = 0;
            for (LaneState state : lanes.values()) {
                budgetRecords += state.budget.records();
                budgetBytes += state.budget.bytes();
            }
            return new Usage(records, bytes, peakRecords, peakBytes, Math.min(budgetRecords, policy.queueLimit()),
                Math.min(budgetBytes, policy.queueLimitBytes()), lanes.size());
        } finally {
            lock.unlock();
        }
    }
}
