package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import com.google.common.util.concurrent.SettableFuture;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import software.amazon.kinesis.producer.DaemonException;
import software.amazon.kinesis.producer.IKinesisProducer;
import sparkkpl.controlplane.FakeLister;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.natives.DaemonFolder;

/** The producer's own bookkeeping around a KPL that misbehaves as the real one can. */
public class SharedProducerTest {
    private static final KinesisRecord RECORD = new KinesisRecord("s", "key", null, "abc".getBytes(StandardCharsets.UTF_8));

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();
    private final FakeLister lister = new FakeLister(System::nanoTime);
    /** The KPL's flushes, counted. */
    private final AtomicInteger flushes = new AtomicInteger();

    /** The producer owns its shard maps: their lister (an HTTP client, maybe an STS one) goes with it. */
    @Test
    public void closingTheProducerClosesItsShardMapsLister() {
        SharedProducer producer = producer(() -> {
            throw new AssertionError("nothing is added");
        }, () -> { });
        producer.close();
        assertTrue(lister.closed);
    }

    /** An Error inside addUserRecord (out of memory, a linkage error) must not keep the record's room for ever. */
    @Test
    public void anErrorInsideTheKplGivesTheRecordsRoomBack() {
        SharedProducer producer = producer(() -> {
            throw new OutOfMemoryError("Java heap space");
        }, () -> { });
        KplRecord record = KplRecord.alone(new TaskRecord(RECORD, 1, 8));
        assertTrue(producer.tryReserve(record, new TaskQueueStats()));

        assertThrows(OutOfMemoryError.class, () -> producer.add(record, new TaskAcks()));

        assertEquals(0, producer.usage().records());
        assertEquals(0, producer.usage().bytes());
    }

    /** While the KPL replaces a dead daemon every add throws; the record waits for the new daemon instead of failing. */
    @Test
    public void anAddWaitsOutADaemonRestartAndPutsAMissingBinaryBack() {
        AtomicInteger calls = new AtomicInteger();
        AtomicInteger placements = new AtomicInteger();
        SharedProducer producer = producer(() -> {
            if (calls.incrementAndGet() <= 5) {
                throw new DaemonException("The child process has been shutdown and can no longer accept messages.");
            }
            return SettableFuture.create();
        }, placements::incrementAndGet);
        KplRecord record = KplRecord.alone(new TaskRecord(RECORD, 1, 8));
        assertTrue(producer.tryReserve(record, new TaskQueueStats()));

        producer.add(record, new TaskAcks());

        assertEquals(6, calls.get());
        assertEquals("the binary is checked before each wait", 5, placements.get());
        assertFalse(producer.isBroken());
        assertEquals("held by the KPL until acknowledged", 1, producer.usage().records());
    }

    @Test
    public void aStreamCreatedAgainOutlivesAProducerWhoseDaemonPredictsShards() {
        SharedProducer producer = producer(SettableFuture::create, () -> { });
        assertTrue(producer.admits(incarnation("s", "1700000000.5")));
        assertTrue("the same stream", producer.admits(incarnation("s", "1700000000.5")));
        assertTrue("another stream", producer.admits(incarnation("t", "1700000100")));
        assertTrue("an endpoint that gives no creation time", producer.admits(incarnation("s", null)));
        assertFalse(producer.isBroken());

        assertFalse("created again since", producer.admits(incarnation("s", "1700000010")));
        assertTrue("replaced for the next tasks", producer.isBroken());
        assertTrue("a write still on the earlier stream goes on (its commit fails)",
            producer.admits(incarnation("s", "1700000000.5")));
    }

    @Test
    public void aDaemonThatPredictsNoShardsServesAnyIncarnation() {
        SharedProducer producer = producer(SettableFuture::create, () -> { }, false);
        assertTrue(producer.admits(incarnation("s", "1700000000")));
        assertTrue(producer.admits(incarnation("s", "1700000010")));
        assertFalse(producer.isBroken());
    }

    /** Every acknowledgement wakes a task blocked at the queue cap; it flushes the KPL at most once per spacing. */
    @Test
    public void aTaskBlockedAtTheQueueCapFlushesTheKplAtMostOncePerSpacing() throws Exception {
        SharedProducer producer = producer(SettableFuture::create, () -> { });
        KplRecord fillsTheByteCap = record("s", 1_000);
        assertTrue(producer.tryReserve(fillsTheByteCap, new TaskQueueStats()));
        int wakeUps = 200;
        Thread acknowledger = new Thread(() -> {
            for (int i = 0; i < wakeUps; i++) { // records of another stream come and go: no room for the blocked one
                sleepMs(1);
                KplRecord other = record("t", 0);
                assertTrue(producer.tryReserve(other, new TaskQueueStats()));
                producer.unreserve(other);
            }
            producer.unreserve(fillsTheByteCap);
        });
        long start = System.nanoTime();
        acknowledger.start();

        producer.reserve(record("s", 1), TimeUnit.SECONDS.toNanos(10), new TaskQueueStats());

        long spacings = (System.nanoTime() - start) / FlushPacing.BLOCKED_SPACING_NANOS;
        assertTrue(flushes.get() + " flushes in " + wakeUps + " wake-ups over " + spacings + " spacings",
            flushes.get() >= 1 && flushes.get() <= spacings + 1);
        acknowledger.join();
    }

    /** One spacing for the producer: a flush by anyone (a task at commit) stands for the blocked task's. */
    @Test
    public void aTaskBlockedAtTheQueueCapCountsTheFlushesOfOthers() {
        SharedProducer producer = producer(SettableFuture::create, () -> { });
        assertTrue(producer.tryReserve(record("s", 1_000), new TaskQueueStats()));
        long flushedAt = System.nanoTime();
        producer.flush();

        assertThrows(TimeoutException.class,
            () -> producer.reserve(record("s", 1), TimeUnit.MILLISECONDS.toNanos(20), new TaskQueueStats()));

        // A machine that stalled this thread for the whole spacing proves nothing either way.
        assumeTrue(System.nanoTime() - flushedAt < FlushPacing.BLOCKED_SPACING_NANOS);
        assertEquals(1, flushes.get());
    }

    private static KplRecord record(String stream, long bytes) {
        return KplRecord.alone(new TaskRecord(new KinesisRecord(stream, "key", null, new byte[1]), 1, bytes));
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static StreamDescription incarnation(String stream, String created) {
        return new StreamDescription(stream, created, null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
    }

    private SharedProducer producer(Supplier<Object> addUserRecord, Runnable keepDaemonInPlace) {
        return producer(addUserRecord, keepDaemonInPlace, true);
    }

    private SharedProducer producer(Supplier<Object> addUserRecord, Runnable keepDaemonInPlace, boolean predictsShards) {
        IKinesisProducer kpl = (IKinesisProducer) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {IKinesisProducer.class}, (proxy, method, args) -> {
                if (method.getName().equals("addUserRecord")) {
                    return addUserRecord.get();
                }
                if (method.getName().equals("flush")) {
                    flushes.incrementAndGet();
                    return null;
                }
                if (method.getName().equals("destroy")) {
                    return null;
                }
                throw new UnsupportedOperationException(method.getName());
            });
        return new SharedProducer(kpl, DaemonFolder.create(tmp.getRoot().toPath(), "nativeDir"), keepDaemonInPlace, Map.of(),
            new ShardMaps(lister, System::nanoTime), predictsShards, 100, 1_000, 30_000, 1_000, 1_000);
    }
}
