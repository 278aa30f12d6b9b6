package sparkkpl.aggregation;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import sparkkpl.config.WriteConfig;

/**
 * The shard maps of an executor JVM, one per stream and producer configuration (the endpoint and
 * credentials are part of it), loaded on first use and shared by the JVM's tasks. A map is loaded
 * again only on demand: when a hash key falls outside every shard it knows, or when a caller saw
 * Kinesis store a record in a shard other than the map's ({@link #invalidate}).
 */
public final class ShardMaps {
    private record Key(Map<String, String> producer, String stream) {}

    private static final Map<Map<String, String>, ShardLister> LISTERS = new ConcurrentHashMap<>();
    private static final Map<Key, ShardMap> MAPS = new ConcurrentHashMap<>();
    /** One load at a time: loads are rare, and concurrent tasks wanting the same map wait for one call. */
    private static final Object LOADING = new Object();

    private ShardMaps() {}

    /**
     * The stream's map, listed now if this JVM has none.
     *
     * @throws IOException when ListShards fails, naming the stream
     */
    public static ShardMap current(WriteConfig config, String stream) throws IOException {
        Key key = new Key(config.producerIdentity(), stream);
        ShardMap map = MAPS.get(key);
        return map != null ? map : load(config, key, null);
    }

    /**
     * Forgets {@code stale}, the stream's map a caller found wrong, and lists the stream again unless
     * another task already did.
     */
    public static ShardMap reload(WriteConfig config, String stream, ShardMap stale) throws IOException {
        return load(config, new Key(config.producerIdentity(), stream), stale);
    }

    /** Forgets {@code stale} so that the stream's next user lists it again. */
    public static void invalidate(WriteConfig config, String stream, ShardMap stale) {
        MAPS.remove(new Key(config.producerIdentity(), stream), stale);
    }

    private static ShardMap load(WriteConfig config, Key key, ShardMap stale) throws IOException {
        synchronized (LOADING) {
            ShardMap known = MAPS.get(key);
            if (known != null && known != stale) {
                return known;
            }
            ShardLister lister = LISTERS.computeIfAbsent(key.producer(), identity -> new ShardLister(config));
            ShardMap loaded = lister.list(key.stream());
            MAPS.put(key, loaded);
            return loaded;
        }
    }
}
