package sparkkpl.kinesis;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How Kinesis places the records of each stream one task writes to: the write's own stream as the
 * driver described it, a stream only rows name as the task's JVM describes it ({@link
 * ShardMaps#describedForRows}, shared by the JVM's tasks), asked again by the task once its answer is
 * older than {@link ShardMaps#DESCRIPTION_MAX_AGE_NANOS}. The KPL's daemon is never left to find out
 * itself: it sends what comes before its answer as if Kinesis placed it. Not thread-safe: one task.
 */
public final class RowStreams {
    private static final Logger LOG = LoggerFactory.getLogger(RowStreams.class);

    /** How a stream's records find their shard. */
    public enum Placement {
        /** By partition or explicit hash key: aggregates go where they are built for. */
        BY_KEY,
        /** By Kinesis itself (record distribution strategy AUTO): one Kinesis record per row. */
        BY_KINESIS,
        /** Not known (DescribeStreamSummary failed): each record travels alone, its key kept. */
        UNKNOWN
    }

    private record Answer(Placement placement, long atNanos) {}

    private final Map<String, StreamDescription> described;
    private final ShardMaps shardMaps;
    /** A monotonic clock in nanoseconds, as {@link System#nanoTime}. */
    private final LongSupplier nanoClock;
    private final Map<String, Answer> answers = new HashMap<>();

    /**
     * @param described the streams the driver described for the write, by name
     * @param shardMaps the maps of the task's producer, whose lister describes the streams rows name
     */
    public RowStreams(Map<String, StreamDescription> described, ShardMaps shardMaps, LongSupplier nanoClock) {
        this.described = described;
        this.shardMaps = shardMaps;
        this.nanoClock = nanoClock;
    }

    public Placement placement(String stream) {
        StreamDescription description = described.get(stream);
        if (description != null) {
            return description.keysIgnored() ? Placement.BY_KINESIS : Placement.BY_KEY;
        }
        Answer answer = answers.get(stream);
        long now = nanoClock.getAsLong();
        if (answer == null || now - answer.atNanos() >= ShardMaps.DESCRIPTION_MAX_AGE_NANOS) {
            answer = new Answer(asked(stream), now);
            answers.put(stream, answer);
        }
        return answer.placement();
    }

    private Placement asked(String stream) {
        try {
            if (shardMaps.describedForRows(stream).keysIgnored()) {
                LOG.warn("Stream '{}' places records itself (record distribution strategy AUTO): this task sends its "
                    + "rows one per Kinesis record, not aggregated", stream);
                return Placement.BY_KINESIS;
            }
            return Placement.BY_KEY;
        } catch (IOException e) {
            LOG.warn("This task sends the records of stream '{}' one by one, not aggregated, as it could not learn how "
                + "Kinesis places them (kinesis:DescribeStreamSummary): {}", stream, e.getMessage());
            return Placement.UNKNOWN;
        }
    }
}
