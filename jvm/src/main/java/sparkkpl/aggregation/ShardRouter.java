package sparkkpl.aggregation;

import java.io.IOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.controlplane.StreamCallFailed;
import sparkkpl.kinesis.HashKey;
import sparkkpl.kinesis.HashKeys;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.util.Durations;

/**
 * Which shard a task's record routes to, by the shard map of the incarnation of its stream the task
 * knows: one map per stream for the task, taken from the JVM's maps when first needed and listed again
 * when it has aged, was retired, or holds no open shard for a key. A stream the task cannot list is
 * given up for the task: its records go without a shard. After a reshard or a stream gone missing, it
 * finds the shard that stored a record by listing again. Not thread-safe: one task, one thread.
 */
final class ShardRouter {
    private static final Logger LOG = LoggerFactory.getLogger(ShardRouter.class);

    /** The task's producer's shard maps, shared with the other tasks using it. */
    private final ShardMaps shardMaps;
    /** The task's streams as described for the write: which incarnation of each to list. */
    private final RowStreams streams;
    /** The shard map this task routes by, per stream: the JVM's map when first needed, then as reloaded. */
    private final Map<String, ShardMap> maps = new HashMap<>();
    /** Streams this task could not list (or route a key in): their records go without a shard. */
    private final Set<String> unlisted = new HashSet<>();
    /** Streams this task could not list for a lane alone: records of sink-chosen keys wait in the stream's lane. */
    private final Set<String> laneless = new HashSet<>();

    /**
     * @param shardMaps the maps of the producer the task feeds
     * @param streams the task's streams as the driver, or for a stream only rows name the JVM, described
     *     them (a stream whose creation time is not known is listed by name alone)
     */
    ShardRouter(ShardMaps shardMaps, RowStreams streams) {
        this.shardMaps = shardMaps;
        this.streams = streams;
    }

    /** Whether this task has given up routing the stream's records by shard. */
    boolean unlisted(String stream) {
        return unlisted.contains(stream);
    }

    /**
     * The id of the open shard the record routes to, listing the stream again if none holds its key;
     * null when the stream cannot be listed (it does not exist, or ListShards is not allowed): its
     * records then go without a shard, and the KPL answers for each as on the per-record path (a missing
     * stream fails them after RecordTtl, for failOnError and the dead letters).
     *
     * @param partitionKey the record's partition key, UTF-8
     */
    String shardOf(KinesisRecord record, byte[] partitionKey) {
        String shard = find(record, partitionKey);
        if (shard == null) {
            unlisted.add(record.stream());
        }
        return shard;
    }

    /**
     * As {@link #shardOf}, for a key that needs its shard for its lane of the queue limit alone (the sink
     * chose it): a stream that cannot be listed goes on without shards for the task, its records in the
     * stream's lane, and is not given up for routing.
     */
    String laneOf(KinesisRecord record, byte[] partitionKey) {
        if (laneless.contains(record.stream()) || unlisted.contains(record.stream())) {
            return null;
        }
        String shard = find(record, partitionKey);
        if (shard == null) {
            laneless.add(record.stream());
        }
        return shard;
    }

    private String find(KinesisRecord record, byte[] partitionKey) {
        HashKey hashKey = HashKeys.effective(partitionKey, record.explicitHashKey());
        try {
            ShardMap map = maps.get(record.stream());
            if (map == null || map.retired() || map.ageNanos() >= ShardMaps.MAX_AGE_NANOS) {
                map = shardMaps.current(record.stream(), createdOf(record.stream()));
                maps.put(record.stream(), map);
            }
            ShardMap.Shard shard = map.shardFor(hashKey);
            if (shard == null) {
                shard = reload(record.stream(), map).shardFor(hashKey);
            }
            if (shard != null) {
                return shard.id();
            }
            LOG.warn("No open shard of stream '{}' holds hash key {}, even after listing its shards again: this task "
                + "sends the stream's records without a shard, under the stream's budget", record.stream(), hashKey);
        } catch (IOException e) {
            LOG.warn("This task sends the records of stream '{}' without a shard (under the stream's budget): {}",
                record.stream(), e.getMessage());
        }
        return null;
    }

    /** How often, and after what pauses, a shard that stored an aggregate is looked for in a new listing. */
    private static final long[] CHILD_LISTING_PAUSES_MS = {0, 200, 500, 1_000, 2_000};

    /**
     * The shard that stored a record, as a map that knows it shows it (null if none does), and whether
     * the stream went missing meanwhile (the map then shows the stream that has the name now).
     */
    record Storing(ShardMap.Shard shard, boolean streamWentMissing) {}

    /**
     * Shard {@code storedIn} of the stream, by a map that knows it. A map listed right after a split may
     * not show the children yet (ListShards is eventually consistent), so the stream is listed again, with
     * pauses, before the shard is declared unknown. After the stream went missing (an attempt met
     * ResourceNotFoundException, or the incarnation the driver described is no longer found), the map
     * comes from a listing by name, and this task stops routing the stream ({@link #forget}).
     */
    Storing storing(String stream, String storedIn, boolean streamWentMissing) throws IOException {
        boolean gone = streamWentMissing;
        ShardMap map = gone ? null : maps.get(stream);
        for (int i = 0; (map == null || map.shard(storedIn) == null) && i < CHILD_LISTING_PAUSES_MS.length; i++) {
            Durations.sleep(CHILD_LISTING_PAUSES_MS[i], "listing shards again");
            try {
                map = gone ? listedByName(stream, map) : reload(stream, map);
            } catch (StreamCallFailed e) {
                if (gone || !e.notFound()) {
                    throw e;
                }
                gone = true; // the stream the driver described is deleted: another may have its name now
                map = listedByName(stream, null);
            }
        }
        if (gone) {
            forget(stream);
        }
        return new Storing(map.shard(storedIn), gone);
    }

    /** A map of the stream listed after {@code stale} (by this task or another), for this task from now on. */
    private ShardMap reload(String stream, ShardMap stale) throws IOException {
        ShardMap fresh = shardMaps.listedAfter(stream, createdOf(stream), stale);
        maps.put(stream, fresh);
        return fresh;
    }

    /** A map of whichever stream has the name now, listed after {@code stale}: after the described one went missing. */
    private ShardMap listedByName(String stream, ShardMap stale) throws IOException {
        return shardMaps.listedAfter(stream, null, stale);
    }

    /**
     * Stops routing a stream that went missing: its map is retired for every task of the JVM (it may
     * describe a deleted stream), and this task sends the stream's records without a shard.
     */
    private void forget(String stream) {
        ShardMap stale = maps.remove(stream);
        if (stale != null) {
            stale.retire();
        }
        unlisted.add(stream);
    }

    /** The creation time the stream was described with for the write, or null when not known. */
    private String createdOf(String stream) {
        return streams.created(stream);
    }
}
