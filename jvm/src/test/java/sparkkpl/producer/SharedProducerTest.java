package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import com.google.common.util.concurrent.SettableFuture;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import software.amazon.kinesis.producer.DaemonException;
import software.amazon.kinesis.producer.IKinesisProducer;
import software.amazon.kinesis.producer.UserRecordResult;
import sparkkpl.controlplane.FakeLister;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.natives.DaemonFolder;
import sparkkpl.util.SharedPool;

/** The producer's own bookkeeping around a KPL that misbehaves as the real one can. */
public class SharedProducerTest {
    private static final KinesisRecord RECORD = new KinesisRecord("s", "key", null, "abc".getBytes(StandardCharsets.UTF_8));

    /** Each record alone, in a lane of its key's own shard. */
    private static final RecordGrouping ONE_SHARD_PER_KEY = new RecordGrouping.EachAlone() {
        @Override
        public void add(TaskRecord record, Consumer<KplRecord> ready) {
            ready.accept(KplRecord.alone(record, "shard-of-" + record.record().partitionKey()));
        }
    };

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();
    private final FakeLister lister = new FakeLister(System::nanoTime);
    /** The KPL's flushes, counted. */
    private final AtomicInteger flushes = new AtomicInteger();
    /** The producers' queueLimit; a new lane's budget is 1/1024 of it (DrainBudget). */
    private long queueLimit = 100;

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

        assertThrows(OutOfMemoryError.class, () -> producer.add(record, new TaskAcks(), () -> { }));

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

        producer.add(record, new TaskAcks(), () -> { });

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

    /**
     * Two tasks, each on a stream created again that the other still knows by its earlier incarnation (their
     * queries described the streams at different times): neither may push the producer out over and over.
     */
    @Test
    public void tasksOnEarlierIncarnationsDoNotReplaceProducersOverAndOver() {
        SharedPool<String, SharedProducer> pool = SharedPool.closedWhenIdle();
        AtomicInteger made = new AtomicInteger();
        Supplier<SharedProducer> create = () -> {
            made.incrementAndGet();
            return producer(SettableFuture::create, () -> { });
        };
        List<StreamDescription> first = List.of(incarnation("s", "1700000000"), incarnation("t", "1700000020"));
        List<StreamDescription> second = List.of(incarnation("s", "1700000010"), incarnation("t", "1700000000"));

        for (int round = 0; round < 4; round++) {
            for (List<StreamDescription> streams : List.of(first, second)) {
                pool.release(ProducerRegistry.acquire(pool, "spec", create, streams));
            }
        }

        assertEquals("one producer, and one more once a later incarnation was met", 2, made.get());
    }

    /** A long query meets ever new stream names: what a producer remembers of them stays bounded. */
    @Test
    public void aProducerRemembersABoundedNumberOfStreams() throws Exception {
        SharedProducer producer = producer(SettableFuture::create, () -> { });
        for (int name = 0; name < 10_000; name++) {
            assertTrue(producer.admits(incarnation("stream-" + name, "1700000000")));
        }

        Field incarnations = SharedProducer.class.getDeclaredField("incarnations");
        incarnations.setAccessible(true);
        int remembered = ((Map<?, ?>) incarnations.get(producer)).size();
        assertTrue(remembered + " stream names remembered", remembered <= SharedProducer.MAX_STREAMS_MET);
        assertTrue("a daemon that met that many streams is replaced for the next tasks", producer.isBroken());
    }

    /** Starting one producer (placing its daemon, finding its region) must not hold up the start of another. */
    @Test
    public void aSlowProducerCreationDoesNotHoldUpAnother() throws Exception {
        CountDownLatch slowStarted = new CountDownLatch(1);
        CountDownLatch finishSlow = new CountDownLatch(1);
        Thread slow = new Thread(() -> ProducerRegistry.created(() -> {
            slowStarted.countDown();
            return finishSlow.await(30, TimeUnit.SECONDS);
        }));
        slow.start();
        try {
            assertTrue(slowStarted.await(10, TimeUnit.SECONDS));
            ExecutorService other = Executors.newSingleThreadExecutor();
            try {
                Future<String> quick = other.submit(() -> ProducerRegistry.created(() -> "made"));
                assertEquals("made", quick.get(5, TimeUnit.SECONDS));
            } finally {
                other.shutdownNow();
            }
        } finally {
            finishSlow.countDown();
            slow.join();
        }
    }

    /** Every acknowledgement wakes a task blocked at the queue limit; it flushes the KPL at most once per spacing. */
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
        producer.flushForCommits();

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

    /**
     * ordering=key: a shard's next record goes to the KPL only once the one before it has its final answer,
     * so that neither a PutRecords call nor a KPL retry stores it first; other shards' records go meanwhile.
     */
    @Test
    public void inKeyOrderAShardsNextRecordWaitsForTheAnswerToTheOneBefore() throws Exception {
        queueLimit = 1024 * 16; // room for every record in its lane: only the order holds them back
        List<String> added = new CopyOnWriteArrayList<>();
        List<SettableFuture<UserRecordResult>> answers = new CopyOnWriteArrayList<>();
        SharedProducer producer = producer(() -> {
            SettableFuture<UserRecordResult> answer = SettableFuture.create();
            answers.add(answer);
            return answer;
        }, () -> { }, true, added);
        TaskAcks acks = new TaskAcks();
        TaskFeed feed = new TaskFeed(producer, acks, new TaskQueueStats(), 10_000, (record, row, error) -> {
            throw error;
        }, ONE_SHARD_PER_KEY, 60_000).inKeyOrder();
        String[] keys = {"a", "a", "b", "a", "b"};
        for (int row = 0; row < keys.length; row++) {
            feed.add(new KinesisRecord("s", keys[row], null, ("row-" + row).getBytes(StandardCharsets.UTF_8)), row);
        }

        feed.send();
        assertEquals("the first of each shard", List.of("row-0", "row-2"), added);
        answers.get(0).set(new UserRecordResult(List.of(), "1", "shard-of-a", true));
        feed.send();
        assertEquals(List.of("row-0", "row-2", "row-1"), added);

        ExecutorService answering = Executors.newSingleThreadExecutor();
        try {
            Future<?> answeringAll = answering.submit(() -> {
                for (int i = 1; i < keys.length; i++) {
                    while (answers.size() <= i) {
                        Thread.onSpinWait();
                    }
                    answers.get(i).set(new UserRecordResult(List.of(), String.valueOf(i), "shard", true));
                }
                return null;
            });
            TaskFeed.finish(List.of(feed), 10_000);
            answeringAll.get(10, TimeUnit.SECONDS);
        } finally {
            answering.shutdownNow();
        }
        assertEquals("shard a's in the task's order", List.of("row-0", "row-1", "row-3"),
            added.stream().filter(row -> List.of("row-0", "row-1", "row-3").contains(row)).toList());
        assertEquals(List.of("row-2", "row-4"), added.stream().filter(row -> row.equals("row-2") || row.equals("row-4")).toList());
        assertEquals(5, acks.succeeded());
    }

    /**
     * A record the KPL never answers may still be stored later: the task fails at commit rather than send the
     * records held behind it (its answer timed out, its future cancelled, and its shard counted free again).
     */
    @Test
    public void inKeyOrderARecordTheKplLostFailsTheCommitInsteadOfSendingTheRecordsBehindIt() throws Exception {
        queueLimit = 1024 * 16;
        SharedProducer producer = producer(SettableFuture::create, () -> { });
        TaskFeed feed = new TaskFeed(producer, new TaskAcks(200, true), new TaskQueueStats(), 10_000, (record, row, error) -> {
            throw error;
        }, ONE_SHARD_PER_KEY, 60_000).inKeyOrder();
        feed.add(new KinesisRecord("s", "a", null, "row-0".getBytes(StandardCharsets.UTF_8)), 0);
        feed.add(new KinesisRecord("s", "a", null, "row-1".getBytes(StandardCharsets.UTF_8)), 1);

        assertThrows(ProducerFailedException.class, () -> TaskFeed.finish(List.of(feed), 10_000));
    }

    private static StreamDescription incarnation(String stream, String created) {
        return new StreamDescription(stream, created, null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
    }

    private SharedProducer producer(Supplier<Object> addUserRecord, Runnable keepDaemonInPlace) {
        return producer(addUserRecord, keepDaemonInPlace, true);
    }

    private SharedProducer producer(Supplier<Object> addUserRecord, Runnable keepDaemonInPlace, boolean predictsShards) {
        return producer(addUserRecord, keepDaemonInPlace, predictsShards, new ArrayList<>());
    }

    /** @param added the data of each record added to the KPL, as text, in the order added */
    private SharedProducer producer(Supplier<Object> addUserRecord, Runnable keepDaemonInPlace, boolean predictsShards,
                                    List<String> added) {
        IKinesisProducer kpl = (IKinesisProducer) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {IKinesisProducer.class}, (proxy, method, args) -> {
                if (method.getName().equals("addUserRecord")) {
                    Object answer = addUserRecord.get();
                    added.add(StandardCharsets.UTF_8.decode((ByteBuffer) args[args.length - 1]).toString());
                    return answer;
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
        return new SharedProducer(
            new SharedProducer.Daemon(kpl, DaemonFolder.create(tmp.getRoot().toPath(), "nativeDir"), keepDaemonInPlace,
                new ShardMaps(lister, System::nanoTime), predictsShards, Map.of()),
            new SharedProducer.Limits(queueLimit, 1_000 * queueLimit, 30_000, 1_000, 1_000));
    }
}
