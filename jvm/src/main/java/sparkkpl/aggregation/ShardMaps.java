package sparkkpl.aggregation;

import java.io.IOException;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import sparkkpl.config.ProducerSpec;

/**
 * The shard maps of an executor JVM, one per stream and producer configuration (the endpoint and
 * credentials are part of it), shared by the JVM's tasks.
 *
 * <p>A map is fit to build aggregates on while it is of the stream's incarnation the driver described
 * for the write (its creation time) and younger than {@link #MAX_AGE_NANOS}; otherwise, or when a
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
     * How long a JVM trusts its description of a stream that only rows name: as long as KPL 1.1's
     * daemon trusts its own (DescribeStreamSummaryIntervalMs), so the sink adds one call per JVM,
     * stream and 5 minutes to Kinesis's 20 a second per account, as the daemon does.
     */
    static final long DESCRIPTION_MAX_AGE_NANOS = TimeUnit.MINUTES.toNanos(5);

    private record Key(ProducerSpec producer, String stream) {}

    /** One stream's latest map and the listing under way, if any. */
    private static final class Slot {
        ShardMap latest;
        CompletableFuture<ShardMap> listing;
        String listingFor;
        long listingStarted;
        /** Guards the description below, apart from the listing, which tasks must not wait behind. */
        final Object describing = new Object();
        StreamDescription description;
        long describedAt;
    }

    private static final Map<Key, Slot> SLOTS = new ConcurrentHashMap<>();

    private ShardMaps() {}

    /**
     * A map of the stream fit to build aggregates on now: of the incarnation created at {@code created}
     * (null: whichever has the name), listed less than {@link #MAX_AGE_NANOS} ago.
     *
     * @throws IOException when ListShards fails, naming the stream (a stream created again since
     *     {@code created} is not found)
     */
    public static ShardMap current(ProducerSpec spec, String stream, String created) throws IOException {
        Slot slot = slot(spec, stream);
        ShardMap latest;
        synchronized (slot) {
            latest = slot.latest;
        }
        return latest != null && fits(latest, created) ? latest : listedAfter(spec, stream, created, latest);
    }

    /**
     * A map of the stream listed after {@code seen} was (null: any fit one): another task's, if it listed
     * the stream since, else the result of one listing shared by every task asking meanwhile.
     */
    public static ShardMap listedAfter(ProducerSpec spec, String stream, String created, ShardMap seen)
            throws IOException {
        Slot slot = slot(spec, stream);
        long seenAt = seen == null ? Long.MIN_VALUE : System.nanoTime() - seen.ageNanos();
        CompletableFuture<ShardMap> listing;
        boolean mine = false;
        synchronized (slot) {
            ShardMap latest = slot.latest;
            if (latest != null && latest != seen && fits(latest, created)
                    && (seen == null || latest.ageNanos() < seen.ageNanos())) {
                return latest;
            }
            if (slot.listing != null && Objects.equals(slot.listingFor, created) && slot.listingStarted - seenAt >= 0) {
                listing = slot.listing;
            } else {
                listing = new CompletableFuture<>();
                slot.listing = listing;
                slot.listingFor = created;
                slot.listingStarted = System.nanoTime();
                mine = true;
            }
        }
        if (mine) {
            list(spec, stream, created, slot, listing);
        }
        return await(listing, stream);
    }

    /**
     * A stream that only rows name, as Kinesis describes it: one {@code DescribeStreamSummary} per JVM,
     * stream and {@link #DESCRIPTION_MAX_AGE_NANOS}, shared by the JVM's tasks. The driver describes
     * the write's own stream; no one else tells executors that a stream rows name places records
     * itself (AUTO), where aggregates would be dropped in part by KCL consumers.
     *
     * @throws IOException when the call fails, naming the stream
     */
    public static StreamDescription describedForRows(ProducerSpec spec, String stream) throws IOException {
        Slot slot = slot(spec, stream);
        synchronized (slot.describing) {
            if (slot.description == null || System.nanoTime() - slot.describedAt >= DESCRIPTION_MAX_AGE_NANOS) {
                slot.description = StreamApi.shared(spec).describe(stream);
                slot.describedAt = System.nanoTime();
            }
            return slot.description;
        }
    }

    private static void list(ProducerSpec spec, String stream, String created, Slot slot,
                             CompletableFuture<ShardMap> listing) {
        try {
            ShardMap listed = StreamApi.shared(spec).listShards(stream, created);
            synchronized (slot) {
                slot.latest = listed;
            }
            listing.complete(listed);
        } catch (IOException | RuntimeException e) {
            listing.completeExceptionally(e);
        } finally {
            synchronized (slot) {
                if (slot.listing == listing) {
                    slot.listing = null;
                }
            }
        }
    }

    private static ShardMap await(CompletableFuture<ShardMap> listing, String stream) throws IOException {
        try {
            return listing.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for the shards of stream '" + stream + "'", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("listing the shards of stream '" + stream + "': " + e.getCause(), e.getCause());
        }
    }

    private static boolean fits(ShardMap map, String created) {
        return !map.retired() && Objects.equals(map.created(), created) && map.ageNanos() < MAX_AGE_NANOS;
    }

    private static Slot slot(ProducerSpec spec, String stream) {
        return SLOTS.computeIfAbsent(new Key(spec, stream), key -> new Slot());
    }
}
