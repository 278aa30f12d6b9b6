package sparkkpl.metrics;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.producer.TaskAcks;
import sparkkpl.producer.TaskQueueStats;

/**
 * The figures of one task, sent to the driver with its commit, or of a whole write once added up; with
 * the streams only rows name as the tasks' JVMs described them, which the driver checks at commit.
 */
public final class WriteSummary implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;
    static final WriteSummary EMPTY = new WriteSummary(new long[WriteMetric.values().length], Set.of());

    private final long[] values;
    private final Set<StreamDescription> streamsMet;

    private WriteSummary(long[] values, Set<StreamDescription> streamsMet) {
        this.values = values;
        this.streamsMet = streamsMet;
    }

    /**
     * A task's figures so far; {@code committed} says whether it counts as a finished task.
     *
     * @param streamsMet the streams only rows name, as the task got them described
     */
    public static WriteSummary ofTask(TaskAcks acks, long failed, long skipped, long unaggregated, TaskQueueStats queue,
                                      Set<StreamDescription> streamsMet, boolean committed) {
        long[] values = new long[WriteMetric.values().length];
        values[WriteMetric.RECORDS_WRITTEN.ordinal()] = acks.succeeded();
        values[WriteMetric.RECORDS_ADDED.ordinal()] = acks.added();
        values[WriteMetric.RECORDS_FAILED.ordinal()] = failed;
        values[WriteMetric.RECORDS_SKIPPED.ordinal()] = skipped;
        values[WriteMetric.RECORDS_RESENT.ordinal()] = acks.resent();
        values[WriteMetric.RECORDS_UNAGGREGATED.ordinal()] = unaggregated;
        values[WriteMetric.BYTES_WRITTEN.ordinal()] = acks.bytesSucceeded();
        values[WriteMetric.KINESIS_RECORDS_WRITTEN.ordinal()] = acks.kinesisRecordsSucceeded();
        values[WriteMetric.KINESIS_THROTTLES.ordinal()] = acks.throttledAttempts();
        values[WriteMetric.BACKPRESSURE_CYCLES.ordinal()] = queue.backpressureCycles();
        values[WriteMetric.BLOCKED_MS.ordinal()] = queue.blockedMs();
        values[WriteMetric.PEAK_OUTSTANDING_RECORDS.ordinal()] = queue.peakOutstandingRecords();
        values[WriteMetric.PEAK_OUTSTANDING_BYTES.ordinal()] = queue.peakOutstandingBytes();
        values[WriteMetric.TASKS.ordinal()] = committed ? 1 : 0;
        return new WriteSummary(values, Set.copyOf(streamsMet));
    }

    /** A task of a micro-batch already delivered before a restart: its rows, not sent again. */
    public static WriteSummary ofReplayedRows(long rows) {
        long[] values = new long[WriteMetric.values().length];
        values[WriteMetric.RECORDS_REPLAYED.ordinal()] = rows;
        values[WriteMetric.TASKS.ordinal()] = 1;
        return new WriteSummary(values, Set.of());
    }

    /** The figures of every task's commit message added up. */
    public static WriteSummary sum(WriterCommitMessage[] messages) {
        WriteSummary total = EMPTY;
        for (WriterCommitMessage message : messages) {
            total = total.plus((WriteSummary) message);
        }
        return total;
    }

    WriteSummary plus(WriteSummary other) {
        long[] sum = new long[values.length];
        for (WriteMetric metric : WriteMetric.values()) {
            int i = metric.ordinal();
            sum[i] = metric.combine(values[i], other.values[i]);
        }
        Set<StreamDescription> met = new HashSet<>(streamsMet);
        met.addAll(other.streamsMet);
        return new WriteSummary(sum, Set.copyOf(met));
    }

    /** The streams only rows name, as the tasks' JVMs described them: an incarnation of one twice if it changed. */
    public Set<StreamDescription> streamsMet() {
        return streamsMet;
    }

    long get(WriteMetric metric) {
        return values[metric.ordinal()];
    }

    public Map<String, Long> toMap() {
        Map<String, Long> map = new LinkedHashMap<>();
        for (WriteMetric metric : WriteMetric.values()) {
            map.put(metric.key(), values[metric.ordinal()]);
        }
        return map;
    }

    /** The same figures as Spark's task metrics, shown in the SQL tab of the Spark UI. */
    public CustomTaskMetric[] taskMetrics() {
        CustomTaskMetric[] metrics = new CustomTaskMetric[values.length];
        for (WriteMetric metric : WriteMetric.values()) {
            long value = values[metric.ordinal()];
            metrics[metric.ordinal()] = new CustomTaskMetric() {
                @Override
                public String name() {
                    return metric.key();
                }

                @Override
                public long value() {
                    return value;
                }
            };
        }
        return metrics;
    }
}
