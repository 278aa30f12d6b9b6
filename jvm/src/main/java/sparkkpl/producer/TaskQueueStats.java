package sparkkpl.producer;

/**
 * How the producer's queue limit (and, in key order, the task's own records of a shard) held one task back: filled in on the task's own thread as it adds
 * records, so it needs no locking.
 */
public final class TaskQueueStats {
    long backpressureCycles;
    long blockedNanos;
    long peakOutstandingRecords;
    long peakOutstandingBytes;

    void admitted(long waitedNanos, long outstandingRecords, long outstandingBytes) {
        if (waitedNanos > 0) {
            backpressureCycles++;
            blockedNanos += waitedNanos;
        }
        peakOutstandingRecords = Math.max(peakOutstandingRecords, outstandingRecords);
        peakOutstandingBytes = Math.max(peakOutstandingBytes, outstandingBytes);
    }

    /** Time spent before the queue limit was even asked, waiting behind the task's own records of a shard in key order. */
    void waitedInKeyOrder(long nanos) {
        backpressureCycles++;
        blockedNanos += nanos;
    }

    public long backpressureCycles() {
        return backpressureCycles;
    }

    public long blockedMs() {
        return blockedNanos / 1_000_000;
    }

    /** The most records the shared producer had outstanding just after this task added one. */
    public long peakOutstandingRecords() {
        return peakOutstandingRecords;
    }

    public long peakOutstandingBytes() {
        return peakOutstandingBytes;
    }
}
