package sparkkpl.producer;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * {@code ordering=key}: at most one of a task's KPL records per lane (stream and shard) with the KPL at a
 * time. A key's rows all go to one shard, and inside an aggregate they keep the task's order; between
 * aggregates nothing else would keep it, because a PutRecords call stores its records in no promised
 * order, and the KPL retries a throttled or failed record after later ones went. So a lane's next
 * aggregate is held, its room already reserved, until Kinesis has given the one before it its final
 * answer.
 *
 * <p>The task's thread holds and releases; the KPL's callback threads only report answers.
 */
final class OneInFlightPerShard {
    /** The lanes with a record at the KPL, each with the records waiting behind it, in order. */
    private final Map<Lane, ArrayDeque<KplRecord>> busy = new HashMap<>();
    /** Lanes whose record at the KPL got its final answer, not yet seen by the task's thread. */
    private final Queue<Lane> answered = new ConcurrentLinkedQueue<>();
    private int held;

    /** Whether {@code record} may go to the KPL now (its lane then counts as busy); if not, it is held. */
    boolean goesNow(KplRecord record) {
        ArrayDeque<KplRecord> waiting = busy.get(record.lane());
        if (waiting == null) {
            busy.put(record.lane(), new ArrayDeque<>());
            return true;
        }
        waiting.add(record);
        held++;
        return false;
    }

    /** Any thread: the record that went in {@code lane} has its final answer (stored, failed or refused). */
    void answered(Lane lane) {
        answered.add(lane);
        synchronized (answered) {
            answered.notifyAll();
        }
    }

    /** Waits up to {@code nanos} for an answer the task's thread has not seen yet. */
    void awaitAnswer(long nanos) throws InterruptedException {
        synchronized (answered) {
            if (answered.isEmpty()) {
                TimeUnit.NANOSECONDS.timedWait(answered, nanos);
            }
        }
    }

    /** Hands {@code into} the next record of each lane whose record was answered; for the task's thread. */
    void releaseAnswered(List<KplRecord> into) {
        for (Lane lane = answered.poll(); lane != null; lane = answered.poll()) {
            ArrayDeque<KplRecord> waiting = busy.get(lane);
            KplRecord next = waiting == null ? null : waiting.poll();
            if (next == null) {
                busy.remove(lane);
            } else {
                held--;
                into.add(next);
            }
        }
    }

    /** How many records wait behind another of their lane. */
    int held() {
        return held;
    }

    /** Drops the held records, giving each to {@code giveBack} (the task failed: none will be sent). */
    void discard(Consumer<KplRecord> giveBack) {
        busy.values().forEach(waiting -> waiting.forEach(giveBack));
        busy.clear();
        answered.clear();
        held = 0;
    }
}
