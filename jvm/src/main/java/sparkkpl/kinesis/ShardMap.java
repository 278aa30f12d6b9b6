package sparkkpl.kinesis;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A stream's open shards and their hash key ranges, as {@code ListShards} returned them at one
 * moment: which shard a hash key routes to. Within one incarnation of a stream a shard's range never
 * changes (resharding makes new shards), so a map goes stale by missing shards; a stream deleted and
 * created again under its name starts its shard ids over with other ranges, which is why a map knows
 * the creation time it was listed for, and when it was listed.
 */
public final class ShardMap {
    /** One shard: its id and its hash key range, both ends included. */
    public record Shard(String id, HashKey start, HashKey end) {
        /** As ListShards gives a shard: its range's ends as numbers. */
        public Shard(String id, BigInteger start, BigInteger end) {
            this(id, HashKey.of(start), HashKey.of(end));
        }

        public boolean contains(HashKey hashKey) {
            return start.compareTo(hashKey) <= 0 && hashKey.compareTo(end) <= 0;
        }
    }

    private final List<Shard> shards;
    private final Map<String, Shard> byId = new HashMap<>();
    private final String created;
    private final long listedAtNanos;
    /** Set once a task saw the stream go missing: the map may describe a deleted stream. */
    private volatile boolean retired;

    /** A map listed now, of whichever stream has the name now. */
    public ShardMap(List<Shard> shards) {
        this(shards, null, System.nanoTime());
    }

    /**
     * @param created the stream's creation time it was listed for (see {@link StreamDescription}), or
     *     null when listed by name alone
     * @param listedAtNanos {@link System#nanoTime} when the listing began
     * @throws IllegalArgumentException when it has no shard or two ranges overlap (a shard list
     *     mixing parents and children)
     */
    public ShardMap(List<Shard> shards, String created, long listedAtNanos) {
        this.created = created;
        this.listedAtNanos = listedAtNanos;
        List<Shard> sorted = new ArrayList<>(shards);
        sorted.sort(Comparator.comparing(Shard::start));
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("a stream has at least one open shard, got none");
        }
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).start().compareTo(sorted.get(i - 1).end()) <= 0) {
                throw new IllegalArgumentException("shards " + sorted.get(i - 1).id() + " and " + sorted.get(i).id()
                    + " overlap: not a list of open shards");
            }
        }
        this.shards = List.copyOf(sorted);
        sorted.forEach(shard -> byId.put(shard.id(), shard));
    }

    /** The open shard with this id, or null when the map has none (not open when it was listed). */
    public Shard shard(String id) {
        return byId.get(id);
    }

    public List<Shard> shards() {
        return shards;
    }

    /** The stream's creation time it was listed for; null when listed by name alone. */
    public String created() {
        return created;
    }

    /** Marks it unfit for every task that holds it: the stream it describes may be gone. */
    public void retire() {
        retired = true;
    }

    public boolean retired() {
        return retired;
    }

    /** Nanoseconds since its listing began. */
    public long ageNanos() {
        return System.nanoTime() - listedAtNanos;
    }

    /** {@link System#nanoTime} (or the clock of the maps that listed it) when its listing began. */
    public long listedAtNanos() {
        return listedAtNanos;
    }

    /** The shard whose range holds the key, or null when no open shard does (a map taken mid-reshard). */
    public Shard shardFor(HashKey hashKey) {
        int low = 0;
        int high = shards.size() - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            Shard shard = shards.get(middle);
            if (hashKey.compareTo(shard.start()) < 0) {
                high = middle - 1;
            } else if (hashKey.compareTo(shard.end()) > 0) {
                low = middle + 1;
            } else {
                return shard;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return "ShardMap" + shards;
    }
}
