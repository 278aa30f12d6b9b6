package sparkkpl.controlplane;

import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.kinesis.StreamDescription;

/**
 * What one task knows of each stream it writes to: the write's own stream as the driver described it,
 * a stream only rows name as the task's JVM describes it for the driver's look ({@link
 * ShardMaps#describedForRows}, shared by the JVM's tasks), asked again by the task once its answer is
 * older than {@link ShardMaps#DESCRIPTION_MAX_AGE_NANOS}. From it come how Kinesis places the stream's
 * records, and which incarnation of it (its creation time) the task's shard maps and producer are for;
 * the driver confirms at commit that the streams the task met are still those ({@link #met}). The
 * KPL's daemon is never left to find out itself: it sends what comes before its answer as if Kinesis
 * placed it. Not thread-safe: one task.
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

    /**
     * @param description null when the stream could not be described
     * @param failure why it could not be, else null
     */
    private record Answer(Placement placement, StreamDescription description, long atNanos, String failure) {}

    private final Map<String, StreamDescription> described;
    private final String lookId;
    /** A monotonic clock in nanoseconds, as {@link System#nanoTime}. */
    private final LongSupplier nanoClock;
    private final Map<String, Answer> answers = new HashMap<>();
    /** Every description of a stream only rows name that the task got, for the commit's check. */
    private final Set<StreamDescription> met = new LinkedHashSet<>();
    /** The maps of the task's producer now, whose lister describes the streams rows name. */
    private ShardMaps shardMaps;
    /** A description the task got since {@link #newlyMet} was last asked. */
    private StreamDescription newlyMet;

    /**
     * @param described the streams the driver described for the write, by name
     * @param lookId the driver's look they come from: the JVM describes the streams rows name once per look
     */
    public RowStreams(Map<String, StreamDescription> described, String lookId, LongSupplier nanoClock) {
        this.described = described;
        this.lookId = lookId;
        this.nanoClock = nanoClock;
    }

    /** Describes the streams rows name with these maps' lister from now on: the task's producer's. */
    public void use(ShardMaps maps) {
        this.shardMaps = maps;
    }

    public Placement placement(String stream) {
        StreamDescription description = described.get(stream);
        if (description != null) {
            return description.keysIgnored() ? Placement.BY_KINESIS : Placement.BY_KEY;
        }
        return answer(stream).placement();
    }

    /**
     * The creation time of the stream's incarnation the task writes to, as the driver or the task's JVM
     * described it; null when not known (not described, or an endpoint that does not say): the
     * stream is then listed by name alone.
     */
    public String created(String stream) {
        StreamDescription description = described.get(stream);
        if (description == null) {
            Answer answer = answers.get(stream);
            description = answer == null ? null : answer.description();
        }
        return description == null ? null : description.created();
    }

    /**
     * Why a task refuses rows naming a stream of {@link Placement#UNKNOWN} placement where the KPL builds
     * the aggregates (aggregation=kpl). Where the task builds them, records of a stream of unknown
     * incarnation travel alone, and a record alone is always read; the KPL's aggregates are built on its
     * daemon's map, which a reused daemon may hold of a stream deleted and created again, and then a KCL
     * consumer drops part of them though Kinesis stored them. Nothing at commit can tell, so the task fails
     * instead (Spark retries it). The option's name is written out: tasks do not load the option table
     * (ExecutorsParseNothingTest).
     */
    public IOException refusedToKplAggregation(String stream) {
        Answer answer = answers.get(stream);
        return new IOException("Rows name stream '" + stream + "', which could not be described ("
            + (answer == null ? null : answer.failure()) + "): with the KPL's own aggregation (aggregation=kpl) its "
            + "aggregates of a stream created again would be stored where a KCL consumer drops part of them, so the "
            + "task fails rather than risk that. Grant kinesis:DescribeStreamSummary on the stream, or write it "
            + "unaggregated (AggregationEnabled=false) or with aggregation=executor");
    }

    /** Every stream the driver described and the task was told of, for its producer to be checked against. */
    public Set<StreamDescription> known() {
        Set<StreamDescription> known = new LinkedHashSet<>(described.values());
        known.addAll(met);
        return known;
    }

    /** The descriptions of the streams only rows name that the task got, every one (a stream may change). */
    public Set<StreamDescription> met() {
        return Collections.unmodifiableSet(met);
    }

    /** The description of a stream only rows name that the task got since the last call, or null. */
    public StreamDescription newlyMet() {
        StreamDescription newly = newlyMet;
        newlyMet = null;
        return newly;
    }

    private Answer answer(String stream) {
        Answer answer = answers.get(stream);
        long now = nanoClock.getAsLong();
        if (answer == null || now - answer.atNanos() >= ShardMaps.DESCRIPTION_MAX_AGE_NANOS) {
            answer = asked(stream, now);
            answers.put(stream, answer);
            if (answer.description() != null && met.add(answer.description())) {
                newlyMet = answer.description();
            }
        }
        return answer;
    }

    private Answer asked(String stream, long now) {
        try {
            StreamDescription description = shardMaps.describedForRows(stream, lookId);
            if (description.keysIgnored()) {
                LOG.warn("Stream '{}' places records itself (record distribution strategy AUTO): this task sends its "
                    + "rows one per Kinesis record, not aggregated", stream);
                return new Answer(Placement.BY_KINESIS, description, now, null);
            }
            return new Answer(Placement.BY_KEY, description, now, null);
        } catch (IOException e) {
            LOG.warn("This task sends the records of stream '{}' one by one, not aggregated, as it could not learn how "
                + "Kinesis places them (kinesis:DescribeStreamSummary): {}", stream, e.getMessage());
            return new Answer(Placement.UNKNOWN, null, now, e.getMessage());
        }
    }
}
