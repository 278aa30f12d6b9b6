package sparkkpl.controlplane;

import java.io.IOException;
import java.io.Serializable;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteOptions;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.util.ParallelCalls;

/**
 * The driver's look at the write's stream (the {@code streamName} option) before any task runs, with
 * {@code DescribeStreamSummary}: which incarnation of the stream the tasks list the shards of, whether
 * Kinesis places its records itself (AUTO), and the largest record it takes. Once per batch write;
 * a streaming query looks again for a micro-batch when its last look is older than {@code reuseNanos},
 * or a stream it stands on was created again since (one ListShards per stream and micro-batch, side by
 * side). Executors describe only the streams rows name, once per look and JVM ({@link Look#id}):
 * Kinesis allows the call 20 times a second per account. Thread-safe, and no lock is held across a call
 * to Kinesis: one query's throttled stream never holds up another's planning.
 */
public final class StreamLook {
    /**
     * One look at the write's streams, shipped with the plan of its tasks: the streams the driver described
     * (none when rows name every stream), by name, and the look's id, which tells the executors when to
     * describe the streams rows name again (once per look), so that theirs are never older than the driver's.
     */
    public record Look(Map<String, StreamDescription> streams, String id) implements Serializable {}

    /** A stream a write stood on that was created again: named, with the creation time the write began on. */
    public record Recreated(String stream, String created) {}

    /** The control-plane calls a look makes, with the driver's client for the write's producer. */
    interface Calls {
        StreamDescription describe(ProducerSpec producer, String stream) throws IOException;

        /** Lists the stream's shards, as the tasks will: refused without the kinesis:ListShards permission. */
        void listShards(ProducerSpec producer, StreamDescription stream) throws IOException;

        /** Whether the incarnation {@code stream} describes still has its name (one ListShards of one shard). */
        boolean stillExists(ProducerSpec producer, StreamDescription stream) throws IOException;
    }

    /** The calls made through the driver's clients ({@link DriverClients}). */
    private static final Calls DRIVER_CALLS = new Calls() {
        @Override
        public StreamDescription describe(ProducerSpec producer, String stream) throws IOException {
            return DriverClients.withStreamApi(producer, api -> api.describe(stream));
        }

        @Override
        public void listShards(ProducerSpec producer, StreamDescription stream) throws IOException {
            DriverClients.withStreamApi(producer, api -> api.listShards(stream.stream(), stream.created()));
        }

        @Override
        public boolean stillExists(ProducerSpec producer, StreamDescription stream) throws IOException {
            return DriverClients.withStreamApi(producer, api -> api.stillExists(stream.stream(), stream.created()));
        }
    };

    private static final Logger LOG = LoggerFactory.getLogger(StreamLook.class);
    /** How long a streaming query's micro-batches reuse a look: one call per 5 s at most, per query. */
    public static final long MICRO_BATCH_REUSE_NANOS = TimeUnit.SECONDS.toNanos(5);

    /**
     * A look as kept for reuse: when it was made, and the streams rows named that its micro-batches met,
     * as their tasks described them ({@link #met}).
     */
    private record Kept(Look look, long atNanos, Set<StreamDescription> met) {
        Kept(Map<String, StreamDescription> streams, long atNanos) {
            this(new Look(streams, UUID.randomUUID().toString()), atNanos, ConcurrentHashMap.newKeySet());
        }

        /**
         * What reusing the look stands on: the streams it described, and every stream its micro-batches'
         * tasks met, each of which an executor may still hold as described for this look (it describes
         * again only for a new look). Checked before the look is reused (one ListShards each), so that a
         * stream created again since is described anew, by the driver and, for a new look, the executors.
         * Kept per look, not per query: a look lives {@code reuseNanos} at most, so a query that meets
         * 10,000 stream names over its life keeps only those met in one look's few seconds.
         */
        List<StreamDescription> standsOn() {
            Set<StreamDescription> all = new LinkedHashSet<>(look.streams().values());
            all.addAll(met);
            return List.copyOf(all);
        }
    }

    private final long reuseNanos;
    private final Calls calls;
    /** A monotonic clock in nanoseconds, as {@link System#nanoTime}. */
    private final LongSupplier nanoClock;
    /** The look the next write or micro-batch may reuse, or null. */
    private final AtomicReference<Kept> last = new AtomicReference<>();
    /**
     * The description under way, if any, which the look's callers meanwhile wait for rather than make
     * their own: no lock is held across a call to Kinesis, which may retry for 30 s.
     */
    private final AtomicReference<CompletableFuture<Kept>> describing = new AtomicReference<>();

    StreamLook(long reuseNanos, Calls calls, LongSupplier nanoClock) {
        this.reuseNanos = reuseNanos;
        this.calls = calls;
        this.nanoClock = nanoClock;
    }

    /** A batch write's look, made once. */
    public static StreamLook perWrite() {
        return new StreamLook(0, DRIVER_CALLS, System::nanoTime);
    }

    /**
     * A streaming query's look, which its micro-batches reuse for {@link #MICRO_BATCH_REUSE_NANOS}; the
     * query keeps it for its life (its table, {@code spark.KplTable}).
     */
    public static StreamLook perQuery() {
        return new StreamLook(MICRO_BATCH_REUSE_NANOS, DRIVER_CALLS, System::nanoTime);
    }

    /**
     * The write's stream as Kinesis describes it now: the last look if it may be reused, else a new one.
     *
     * @param listsShards whether the tasks list the shards of the streams they write
     */
    public Look look(WriteOptions options, boolean listsShards) {
        Kept current = last.get();
        if (reusable(current, options)) {
            return current.look();
        }
        CompletableFuture<Kept> mine = new CompletableFuture<>();
        CompletableFuture<Kept> running = describing.compareAndExchange(null, mine);
        if (running != null) {
            return ParallelCalls.awaited(running).look();
        }
        try {
            Kept made = newLook(options, listsShards);
            last.set(made);
            mine.complete(made);
            return made.look();
        } catch (RuntimeException | Error e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            describing.set(null);
        }
    }

    /** Whether {@code look} is young enough, for the write's stream, and no stream it stands on was created again. */
    private boolean reusable(Kept kept, WriteOptions options) {
        Optional<String> stream = Optional.ofNullable(options.target().streamName());
        return kept != null && nanoClock.getAsLong() - kept.atNanos() < reuseNanos
            && stream.map(kept.look().streams()::containsKey).orElse(kept.look().streams().isEmpty())
            && firstGone(options, kept.standsOn()) == null;
    }

    /**
     * The write's stream as Kinesis describes it now (none when rows name every stream).
     *
     * @throws IllegalArgumentException when no such stream exists, the write's credentials give none, or
     *     Kinesis cannot be asked (saying which permission the sink needs: DescribeStreamSummary, and
     *     ListShards where {@code listsShards}, the tasks' way of grouping the user's keys by shard):
     *     the write is refused before any task
     */
    private Kept newLook(WriteOptions options, boolean listsShards) {
        Optional<String> stream = Optional.ofNullable(options.target().streamName());
        if (stream.isEmpty()) {
            return new Kept(Map.of(), nanoClock.getAsLong());
        }
        try {
            StreamDescription described = calls.describe(options.producer(), stream.get());
            if (listsShards && !described.keysIgnored()) {
                checkListable(options, described);
            }
            return new Kept(Map.of(stream.get(), described), nanoClock.getAsLong());
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
     * Tasks building aggregates list the stream's shards; without the permission each task would warn and
     * send every row alone, many times slower (a choice that should be the user's, aggregation=kpl).
     */
    private void checkListable(WriteOptions options, StreamDescription stream) throws IOException {
        try {
            calls.listShards(options.producer(), stream);
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
     * one shard per stream (Kinesis allows 1,000 a second per stream), all at once; a stream deleted and
     * created again in between fails the write, since a consumer may miss records Kinesis reported as
     * written. A check that cannot be made is logged, not failed: nothing is known to be wrong then.
     *
     * The look is then forgotten, so that no micro-batch reuses the description of a stream that is gone;
     * else the streams the tasks met are added to those its reuse stands on ({@link Kept#standsOn}).
     *
     * @param options the values of the write the tasks ran (their plan's)
     * @param look the look the tasks' plan was made from
     * @param metByTasks the streams rows named, as the tasks' JVMs described them ({@code WriteSummary})
     * @return the stream created again, for the write to fail with; empty when each is still the one described
     */
    public Optional<Recreated> confirmUnchanged(WriteOptions options, Look look, Collection<StreamDescription> metByTasks) {
        Optional<Recreated> recreated = recreatedIn(options, new HashMap<>(look.streams()), metByTasks);
        if (recreated.isPresent()) {
            last.set(null);
            return recreated;
        }
        Kept kept = last.get();
        if (kept != null && kept.look().id().equals(look.id())) {
            kept.met().addAll(metByTasks);
        }
        return recreated;
    }

    /**
     * The stream created again during the write, if any.
     *
     * @param checked the streams the driver described; the streams only rows named are added to it
     */
    private Optional<Recreated> recreatedIn(WriteOptions options, Map<String, StreamDescription> checked,
                                            Collection<StreamDescription> metByTasks) {
        for (StreamDescription met : metByTasks) {
            StreamDescription other = checked.putIfAbsent(met.stream(), met);
            if (other != null && other.created() != null && !other.created().equals(met.created())) {
                return Optional.of(new Recreated(met.stream(), oldest(other.created(), met.created())));
            }
        }
        StreamDescription gone = firstGone(options, List.copyOf(checked.values()));
        return Optional.ofNullable(gone).map(stream -> new Recreated(stream.stream(), stream.created()));
    }

    /** The earlier of two creation times, the one the write began on. */
    private static String oldest(String one, String other) {
        return StreamDescription.createdLater(one, other) ? other : one;
    }

    /**
     * The first of these streams whose name another stream has now, where the write aggregates records
     * (one ListShards of one shard each, side by side: {@link ParallelCalls}), or null. A check that
     * cannot be made is logged, not failed.
     */
    private StreamDescription firstGone(WriteOptions options, List<StreamDescription> streams) {
        if (!options.aggregating().aggregatesRecords()) {
            return null;
        }
        List<StreamDescription> checked = streams.stream()
            // an emulator that gives no creation time; AUTO streams take no aggregates
            .filter(stream -> stream.created() != null && !stream.keysIgnored()).toList();
        List<Boolean> gone = ParallelCalls.each(checked, stream -> gone(options, stream));
        for (int i = 0; i < checked.size(); i++) {
            if (gone.get(i)) {
                return checked.get(i);
            }
        }
        return null;
    }

    private boolean gone(WriteOptions options, StreamDescription stream) {
        try {
            return !calls.stillExists(options.producer(), stream);
        } catch (IOException e) {
            LOG.warn("Could not check that stream '{}' was not created again during the write: {}", stream.stream(),
                e.getMessage());
            return false;
        }
    }
}
