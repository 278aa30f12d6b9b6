package sparkkpl.controlplane;

import java.io.IOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;

/** Kinesis as {@link ShardMaps} asks it, on a given clock: one shard per stream, each listing counted. */
public final class FakeLister implements ShardMaps.Lister {
    private final LongSupplier nanoClock;
    public final AtomicInteger listings = new AtomicInteger();
    public final AtomicInteger descriptions = new AtomicInteger();
    public volatile boolean closed;
    /** Each stream's record distribution strategy as described (absent: none, a provisioned stream). */
    public final Map<String, String> distributions = new ConcurrentHashMap<>();
    /** Each stream's creation time as described (absent: none, an endpoint that does not say). */
    public final Map<String, String> created = new ConcurrentHashMap<>();
    /** The creation time each listing asked for, in order (null: by name alone, written "by name"). */
    public final List<String> listedFor = new CopyOnWriteArrayList<>();
    /** Whether describing fails, as without kinesis:DescribeStreamSummary. */
    public volatile boolean describingRefused;
    /** Counted down when a listing starts; a listing waits for {@link #release} before it answers. */
    public volatile CountDownLatch started = new CountDownLatch(0);
    public volatile CountDownLatch release = new CountDownLatch(0);
    /** What a listing dies of once released, if anything: an Error, which no catch of IOException sees. */
    public volatile Error listingDies;
    /** Counted down when a description starts; each description then takes one of {@link #descriptionsLetThrough}. */
    public volatile CountDownLatch describeStarted = new CountDownLatch(0);
    public final Semaphore descriptionsLetThrough = new Semaphore(Integer.MAX_VALUE);

    public FakeLister(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    @Override
    public ShardMap listShards(String stream, String created) throws IOException {
        long listedAt = nanoClock.getAsLong();
        listings.incrementAndGet();
        listedFor.add(created == null ? "by name" : created);
        started.countDown();
        waitFor(release::await);
        if (listingDies != null) {
            throw listingDies;
        }
        return new ShardMap(List.of(new ShardMap.Shard("shardId-0", BigInteger.ZERO,
            BigInteger.TWO.pow(128).subtract(BigInteger.ONE))), created, listedAt);
    }

    @Override
    public StreamDescription describe(String stream) throws IOException {
        descriptions.incrementAndGet();
        describeStarted.countDown();
        waitFor(descriptionsLetThrough::acquire);
        if (describingRefused) {
            throw new IOException("AccessDeniedException: not authorized to perform kinesis:DescribeStreamSummary");
        }
        return new StreamDescription(stream, created.get(stream), distributions.get(stream),
            StreamDescription.DEFAULT_MAX_RECORD_KIB);
    }

    private interface Wait {
        void run() throws InterruptedException;
    }

    /** Waits as a call to Kinesis would: an interrupt fails it. */
    private static void waitFor(Wait wait) throws IOException {
        try {
            wait.run();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
