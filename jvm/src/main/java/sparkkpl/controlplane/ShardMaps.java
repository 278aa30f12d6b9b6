package sparkkpl.controlplane;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.util.IdleSweep;
import sparkkpl.util.OffTaskThread;

/**
 * One producer's shard maps, one per stream, shared by the tasks of its JVM that use the producer
 * (so of the same endpoint and credentials); the producer's pool entry owns them, and closes their
 * lister with the producer.
 *
 * <p>A map is fit to build aggregates on while it is of the stream's incarnation described for the
 * write (its creation time: by the driver, or by this JVM for a stream only rows name) and younger than
 * {@link #MAX_AGE_NANOS}; otherwise, or when a
 * task finds it wrong, the stream is listed again. Tasks that want a newer map at the same time share
 * one {@code ListShards}: one listing per JVM, stream and change, and a task waits only for that
 * listing's result, never behind a lock that other streams' listings hold.
 */
public final class ShardMaps {
    /**
     * How long a map is trusted without news from Kinesis. A reshard shows at once (Kinesis stores an
     * aggregate in a shard it was not built for), a stream deleted and created again shows in the
     * ResourceNotFoundException its puts meet in between, or in the creation time the driver describes
     * at the next write; this bounds what neither shows.
     */
    public static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /**
     * How long a JVM trusts its description of a stream that only rows name, within one look of the
     * driver's: as long as KPL 1.1's daemon trusts its own (DescribeStreamSummaryIntervalMs).
     */
    public static final long DESCRIPTION_MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(5);
    /** The shared listings and descriptions of every producer of the JVM. */
    private static final ExecutorService CALLS = OffTaskThread.newPool("spark-kpl-shard-maps");

    /** What the maps ask Kinesis: {@link StreamApi}, or a fake in tests. */
    public interface Lister extends AutoCloseable {
        /** The open shards of the stream, of the incarnation created at {@code created} (null: any). */
        ShardMap listShards(String stream, String created) throws IOException;

        StreamDescription describe(String stream) throws IOException;

        @Override
        void close();
    }

    /**
     * Who describes a stream that only rows name, for a look of the driver's: the driver itself through
     * the sink's plugin ({@link DescriptionsFromDriver}), so that the calls do not grow with the executors,
     * else this JVM's {@link Lister}.
     */
    public interface Describer {
        StreamDescription describe(String stream, String lookId) throws IOException;
    }

    /** One stream's latest map and description, and the listing and description under way, if any. */
    private static final class Slot {
        ShardMap latest;
        CompletableFuture<ShardMap> listing;
        String listingFor;
        long listingStarted;
        StreamDescription description;
        long describedAt;
        /** The driver's look the description was made for. */
        String describedFor;
        /** The description under way, shared by the tasks asking meanwhile, and the look it is for. */
        CompletableFuture<StreamDescription> describing;
        String describingFor;
    }

    private final Lister lister;
    private final Describer describer;
    /** A monotonic clock in nanoseconds, as {@link System#nanoTime}, which the listings' times come from. */
    private final LongSupplier nanoClock;
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();
    /** Forgets, once per {@link #MAX_AGE_NANOS}, the streams met long ago. */
    private final IdleSweep stale;

    /** Maps that describe the streams rows name with {@code lister} itself. */
    public ShardMaps(Lister lister, LongSupplier nanoClock) {
        this(lister, (stream, lookId) -> lister.describe(stream), nanoClock);
    }

    public ShardMaps(Lister lister, Describer describer, LongSupplier nanoClock) {
        this.lister = lister;
        this.describer = describer;
        this.nanoClock = nanoClock;
        this.stale = new IdleSweep(MAX_AGE_NANOS, nanoClock.getAsLong());
    }

    /**
     * A map of the stream fit to build aggregates on now: of the incarnation created at {@code created}
     * (null: whichever has the name), listed less than {@link #MAX_AGE_NANOS} ago.
     *
     * @throws IOException when ListShards fails, naming the stream (a stream created again since
     *     {@code created} is not found)
     */
    public ShardMap current(String stream, String created) throws IOException {
        Slot slot = slot(stream);
        ShardMap latest;
        synchronized (slot) {
            latest = slot.latest;
        }
        return latest != null && fits(latest, created) ? latest : listedAfter(stream, created, latest);
    }

    /**
     * A map of the stream listed after {@code seen} was (null: any fit one): another task's, if it listed
     * the stream since, else the result of one listing shared by every task asking meanwhile.
     */
    public ShardMap listedAfter(String stream, String created, ShardMap seen) throws IOException {
        Slot slot = slot(stream);
        CompletableFuture<ShardMap> listing;
        boolean mine = false;
        synchronized (slot) {
            ShardMap latest = slot.latest;
            if (latest != null && latest != seen && fits(latest, created)
                    && (seen == null || latest.listedAtNanos() - seen.listedAtNanos() > 0)) {
                return latest;
            }
            // A listing under way serves a task that has no map yet, or whose map it started after. (Clock
            // values are compared by difference: nanoTime may be negative, and MIN_VALUE would overflow.)
            boolean newerThanSeen = seen == null || slot.listingStarted - seen.listedAtNanos() >= 0;
            if (slot.listing != null && Objects.equals(slot.listingFor, created) && newerThanSeen) {
                listing = slot.listing;
            } else {
                listing = new CompletableFuture<>();
                slot.listing = listing;
                slot.listingFor = created;
                slot.listingStarted = nanoClock.getAsLong();
                mine = true;
            }
        }
        if (mine) {
            shareOffTask(listing, () -> listed(stream, created, slot), () -> {
                synchronized (slot) {
                    if (slot.listing == listing) {
                        slot.listing = null;
                    }
                }
            });
        }
        return await(listing, "listing the shards of stream '" + stream + "'");
    }

    private ShardMap listed(String stream, String created, Slot slot) throws IOException {
        ShardMap listed = lister.listShards(stream, created);
        synchronized (slot) {
            slot.latest = listed;
        }
        return listed;
    }

    /**
     * A stream that only rows name, as Kinesis describes it for the driver's look ({@code lookId}: once
     * per batch write, at most every 5 s for a streaming query): asked once per JVM, stream and look, and
     * again past {@link #DESCRIPTION_MAX_AGE_NANOS}, of the {@link Describer} (the driver, where the
     * sink's plugin runs), shared by the JVM's tasks: those asking for the same look while it is under way
     * (its retries may take minutes) wait for it and get its answer or its failure, and the next task
     * after a failure asks again. The driver describes the write's own stream before the tasks; nothing
     * else tells executors that a stream rows name places records itself (AUTO), where aggregates would
     * be dropped in part by KCL consumers, or was created again since the last write (its creation
     * time), where a map or a daemon of the old one would put records in shards a KCL consumer reads them
     * from no more.
     *
     * @throws IOException when the call fails, naming the stream
     */
    public StreamDescription describedForRows(String stream, String lookId) throws IOException {
        Slot slot = slot(stream);
        while (true) {
            CompletableFuture<StreamDescription> describing;
            boolean mine = false;
            boolean forThisLook;
            synchronized (slot) {
                if (slot.description != null && Objects.equals(slot.describedFor, lookId)
                        && nanoClock.getAsLong() - slot.describedAt < DESCRIPTION_MAX_AGE_NANOS) {
                    return slot.description;
                }
                if (slot.describing == null) {
                    slot.describing = new CompletableFuture<>();
                    slot.describingFor = lookId;
                    mine = true;
                }
                describing = slot.describing;
                forThisLook = Objects.equals(slot.describingFor, lookId);
            }
            if (mine) {
                shareOffTask(describing, () -> described(stream, lookId, slot), () -> {
                    synchronized (slot) {
                        slot.describing = null;
                    }
                });
            }
            if (forThisLook) {
                return await(describing, "describing stream '" + stream + "'");
            }
            describing.handle((described, failure) -> null).join(); // another look's: then describe for this one
        }
    }

    private StreamDescription described(String stream, String lookId, Slot slot) throws IOException {
        StreamDescription described = describer.describe(stream, lookId);
        synchronized (slot) {
            slot.description = described;
            slot.describedAt = nanoClock.getAsLong();
            slot.describedFor = lookId;
        }
        return described;
    }

    /**
     * Completes {@code result} with what {@code call} returns or throws, whatever it throws: the tasks
     * waiting for it have no timeout. {@code after} runs first (the next call may start), so that a task
     * woken by the result finds the call no longer under way. The call runs on
     * a thread of its own, not the asking task's: Spark interrupts the thread of a task it kills (a
     * speculative attempt that lost), which would fail the call for every task waiting for it.
     */
    private static <T> void shareOffTask(CompletableFuture<T> result, Callable<T> call, Runnable after) {
        CALLS.execute(() -> shareResult(result, call, after));
    }

    private static <T> void shareResult(CompletableFuture<T> result, Callable<T> call, Runnable after) {
        T value = null;
        Throwable failure = null;
        try {
            value = call.call();
        } catch (Throwable e) {
            failure = e;
        }
        try {
            after.run();
        } finally {
            if (failure == null) {
                result.complete(value);
            } else {
                result.completeExceptionally(failure);
            }
        }
    }

    /** The shared call's result; an {@link Error} it died of is thrown as it is, any other failure as an IOException. */
    private static <T> T await(CompletableFuture<T> call, String what) throws IOException {
        try {
            return call.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + what, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof Error error) {
                throw error;
            }
            throw new IOException(what + ": " + e.getCause(), e.getCause());
        }
    }

    /** The open shards of every stream listed here, by its latest map: those its producer's daemon may have met. */
    public int shardsListed() {
        int shards = 0;
        for (Slot slot : slots.values()) {
            synchronized (slot) {
                shards += slot.latest == null ? 0 : slot.latest.shards().size();
            }
        }
        return shards;
    }

    private boolean fits(ShardMap map, String created) {
        return !map.retired() && Objects.equals(map.created(), created)
            && nanoClock.getAsLong() - map.listedAtNanos() < MAX_AGE_NANOS;
    }

    private Slot slot(String stream) {
        forgetStale();
        return slots.computeIfAbsent(stream, name -> new Slot());
    }

    /**
     * Drops the streams whose map and description are too old to be used again as they are (nothing under
     * way): a long query meeting many stream names keeps only those it met lately.
     */
    private void forgetStale() {
        long now = nanoClock.getAsLong();
        stale.sweep(slots.values(), now, slot -> slot.listing == null && slot.describing == null
            && (slot.latest == null || now - slot.latest.listedAtNanos() >= MAX_AGE_NANOS)
            && (slot.description == null || now - slot.describedAt >= DESCRIPTION_MAX_AGE_NANOS));
    }

    /** How many streams it holds maps or descriptions of. */
    int streamsHeld() {
        return slots.size();
    }

    /** Closes the lister: its producer closed. */
    public void close() {
        lister.close();
    }
}
