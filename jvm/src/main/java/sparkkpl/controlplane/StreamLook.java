package sparkkpl.controlplane;

import java.io.IOException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.aws.Credentials;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteOptions;
import sparkkpl.kinesis.StreamDescription;

/**
 * The driver's look at the write's stream (the {@code streamName} option) before any task runs, with
 * {@code DescribeStreamSummary}: which incarnation of the stream the tasks list the shards of, whether
 * Kinesis places its records itself (AUTO), and the largest record it takes. Once per batch write;
 * a streaming query looks again for a micro-batch when its last look is older than {@code reuseNanos},
 * or a stream it stands on was created again since (one ListShards per stream and micro-batch).
 * Executors describe only the streams rows name, once per look and JVM ({@code WritePlan.lookId}):
 * Kinesis allows the call 20 times a second per account.
 */
public final class StreamLook {
    /** What a look reads of a write as the driver resolved it, and the plan of its tasks it makes ({@code spark.ResolvedWrite}). */
    public interface Resolved<P extends Plan> {
        /** The write's own values, before any stream is described. */
        WriteOptions options();

        /** Whether the tasks list the shards of the streams they write. */
        boolean listsShards();

        /** The plan of the tasks for the streams the driver described (none when rows name every stream), and the look's id. */
        P plan(Map<String, StreamDescription> streams, String lookId);
    }

    /** What the commit check reads of the plan the tasks ran ({@code spark.WritePlan}). */
    public interface Plan {
        WriteOptions options();

        /** The streams the driver described for the plan, by name. */
        Map<String, StreamDescription> streams();

        /** What the write fails with when {@code stream}, described as created at {@code created}, was created again. */
        RuntimeException recreated(String stream, String created);
    }

    private static final Logger LOG = LoggerFactory.getLogger(StreamLook.class);
    /** How long a streaming query's micro-batches reuse a look: one call per 5 s at most, per query. */
    public static final long MICRO_BATCH_REUSE_NANOS = TimeUnit.SECONDS.toNanos(5);

    /**
     * Each streaming query's look, by the query's id: Spark builds a query's write anew
     * for every micro-batch, so the look must outlive it to be reused. A look is forgotten once it is
     * as old as its reuse allows, described or not (a query whose rows name every stream has nothing
     * described), so the map holds only the queries that ran in the last {@link #MICRO_BATCH_REUSE_NANOS}.
     */
    private static final Map<String, StreamLook> QUERY_LOOKS = new ConcurrentHashMap<>();

    /**
     * One look: the write's stream as described, and an id that tells the executors when to describe the
     * streams rows name again (once per look), so that theirs are never older than the driver's.
     */
    private record Look(Map<String, StreamDescription> streams, String id, long atNanos) {}

    private final long reuseNanos;
    private Look last;
    /** The streams rows named in the last micro-batch confirmed, as its tasks met them. */
    private Set<StreamDescription> lastMet = Set.of();
    /** When the look was made: it expires from then until it has a look of its own. */
    private final long madeAt;

    private StreamLook(long reuseNanos, long madeAt) {
        this.reuseNanos = reuseNanos;
        this.madeAt = madeAt;
    }

    public static StreamLook perWrite() {
        return new StreamLook(0, System.nanoTime());
    }

    /** The look of the streaming query of this id, shared by its micro-batches' writes. */
    public static StreamLook forQuery(String queryId) {
        return forQuery(queryId, System.nanoTime());
    }

    /** {@link #forQuery(String)} at {@code now}, as {@link System#nanoTime} gives it. */
    static StreamLook forQuery(String queryId, long now) {
        QUERY_LOOKS.values().removeIf(look -> look.expired(now)); // nothing to reuse there any more
        return QUERY_LOOKS.computeIfAbsent(queryId, id -> new StreamLook(MICRO_BATCH_REUSE_NANOS, now));
    }

    private synchronized boolean expired(long now) {
        return now - (last == null ? madeAt : last.atNanos()) >= reuseNanos;
    }

    /**
     * The write's stream as Kinesis describes it now (none when rows name every stream).
     *
     * @throws IllegalArgumentException when no such stream exists, the write's credentials give none, or
     *     Kinesis cannot be asked (saying which permission the sink needs: DescribeStreamSummary, and
     *     ListShards where {@code listsShards}, the tasks' way of grouping the user's keys by shard):
     *     the write is refused before any task
     */
    private synchronized Look describe(WriteOptions options, boolean listsShards) {
        Optional<String> stream = Optional.ofNullable(options.streamName());
        if (last != null && System.nanoTime() - last.atNanos() < reuseNanos
                && stream.map(last.streams()::containsKey).orElse(last.streams().isEmpty())
                && firstGone(options, lastChecked()) == null) {
            return last;
        }
        if (stream.isEmpty()) {
            last = new Look(Map.of(), UUID.randomUUID().toString(), System.nanoTime());
            return last;
        }
        try {
            StreamDescription described = DriverClients.withStreamApi(options.producer(), api -> api.describe(stream.get()));
            if (listsShards && !described.keysIgnored()) {
                checkListable(options, described);
            }
            last = new Look(Map.of(stream.get(), described), UUID.randomUUID().toString(), System.nanoTime());
            return last;
        } catch (StreamCallFailed e) {
            if (e.notFound()) {
                throw new IllegalArgumentException("Option '" + SinkOption.STREAM_NAME.optionName() + "': stream '"
                    + stream.get() + "' does not exist (" + e.getMessage() + ")", e);
            }
            throw lookFailed(stream.get(), e);
        } catch (IOException e) {
            throw lookFailed(stream.get(), e);
        } catch (Credentials.Unavailable e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    /**
     * What a micro-batch's look stands on: the streams it described, and those the last micro-batch's
     * tasks met. Checked before the look is reused (one ListShards each), so that a stream created again
     * between two micro-batches is described anew, by the driver and, for a new look, by the executors.
     */
    private Set<StreamDescription> lastChecked() {
        Set<StreamDescription> checked = new HashSet<>(last.streams().values());
        checked.addAll(lastMet);
        return checked;
    }

    /**
     * Tasks building aggregates list the stream's shards; without the permission each task would warn and
     * send every row alone, many times slower (a choice that should be the user's, aggregation=kpl).
     */
    private static void checkListable(WriteOptions options, StreamDescription stream) throws IOException {
        try {
            DriverClients.withStreamApi(options.producer(), api -> api.listShards(stream.stream(), stream.created()));
        } catch (StreamCallFailed e) {
            if (e.notFound()) {
                throw e;
            }
            throw new IllegalArgumentException("Option '" + SinkOption.AGGREGATION.optionName() + "=executor' (the "
                + "default) builds aggregates per shard, so the tasks list the shards of stream '" + stream.stream()
                + "' (the kinesis:ListShards permission), and Kinesis refused: " + e.getMessage() + ". Grant "
                + "kinesis:ListShards on the stream, or set " + SinkOption.AGGREGATION.optionName() + "=kpl to write "
                + "without it (the KPL aggregates; much slower on small records: docs/performance.md)", e);
        }
    }

    private static IllegalArgumentException lookFailed(String stream, IOException cause) {
        return new IllegalArgumentException("Before writing, the sink describes stream '" + stream + "' (the "
            + "kinesis:DescribeStreamSummary permission) to learn how Kinesis places its records and the largest "
            + "record it takes: " + cause.getMessage(), cause);
    }

    /**
     * After every task committed, so after Kinesis acknowledged every record: each stream the write
     * aggregated records for, described by the driver or (named by rows) by the tasks' JVMs, must still
     * be the one described, and the tasks must have met one incarnation of it only. One ListShards of
     * one shard per stream (Kinesis allows 1,000 a second per stream); a stream deleted and created
     * again in between fails the write, since a consumer may miss records Kinesis reported as written.
     * A check that cannot be made is logged, not failed: nothing is known to be wrong then.
     *
     * The look is then forgotten: a query restarted from its checkpoint keeps its id, so its next
     * micro-batch would otherwise reuse the description of the stream that is gone, and fail again.
     *
     * @param metByTasks the streams rows named, as the tasks' JVMs described them ({@code WriteSummary})
     * @throws RuntimeException the plan's {@link Plan#recreated} failure, naming the stream
     */
    public void confirmUnchanged(Plan plan, Collection<StreamDescription> metByTasks) {
        Map<String, StreamDescription> checked = new HashMap<>(plan.streams());
        RuntimeException recreated = recreatedIn(plan, checked, metByTasks);
        if (recreated != null) {
            forget();
            throw recreated;
        }
        remember(metByTasks);
    }

    /**
     * The failure of a stream created again during the write, or null when each is still the one described.
     *
     * @param checked the streams the driver described; the streams only rows named are added to it
     */
    private static RuntimeException recreatedIn(Plan plan, Map<String, StreamDescription> checked,
                                                Collection<StreamDescription> metByTasks) {
        for (StreamDescription met : metByTasks) {
            StreamDescription other = checked.putIfAbsent(met.stream(), met);
            if (other != null && other.created() != null && !other.created().equals(met.created())) {
                return plan.recreated(met.stream(), oldest(other.created(), met.created()));
            }
        }
        StreamDescription gone = firstGone(plan.options(), checked.values());
        return gone == null ? null : plan.recreated(gone.stream(), gone.created());
    }

    private synchronized void forget() {
        last = null;
        lastMet = Set.of();
    }

    private synchronized void remember(Collection<StreamDescription> metByTasks) {
        lastMet = Set.copyOf(metByTasks);
    }

    /** The earlier of two creation times, the one the write began on. */
    private static String oldest(String one, String other) {
        return StreamDescription.createdLater(one, other) ? other : one;
    }

    /**
     * The first of these streams whose name another stream has now, where the write aggregates records
     * (one ListShards of one shard each), or null. A check that cannot be made is logged, not failed.
     */
    private static StreamDescription firstGone(WriteOptions options, Collection<StreamDescription> streams) {
        if (!options.aggregatesRecords()) {
            return null;
        }
        for (StreamDescription stream : streams) {
            if (stream.created() == null || stream.keysIgnored()) {
                continue; // an emulator that gives no creation time; AUTO streams take no aggregates
            }
            try {
                if (!DriverClients.withStreamApi(options.producer(),
                        api -> api.stillExists(stream.stream(), stream.created()))) {
                    return stream;
                }
            } catch (IOException e) {
                LOG.warn("Could not check that stream '{}' was not created again during the write: {}", stream.stream(),
                    e.getMessage());
            }
        }
        return null;
    }

    /** The plan of {@code write}'s tasks for the streams as the driver sees them now. */
    public <P extends Plan> P described(Resolved<P> write) {
        Look now = describe(write.options(), write.listsShards());
        return write.plan(now.streams(), now.id());
    }
}
