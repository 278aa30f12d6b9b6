package sparkkpl.controlplane;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.Test;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.TestConfigs;
import sparkkpl.config.WriteOptions;
import sparkkpl.kinesis.StreamDescription;

/** The driver's looks at the streams: reused by a query's micro-batches, checked first, never behind a lock. */
public class StreamLookTest {
    private static final long REUSE = StreamLook.MICRO_BATCH_REUSE_NANOS;

    /** Kinesis as a look asks it: each stream created at "1" unless gone; calls counted, each may be held. */
    private static final class FakeCalls implements StreamLook.Calls {
        final Set<String> gone = ConcurrentHashMap.newKeySet();
        final AtomicInteger descriptions = new AtomicInteger();
        final AtomicInteger checks = new AtomicInteger();
        final AtomicInteger checking = new AtomicInteger();
        final AtomicInteger mostCheckingAtOnce = new AtomicInteger();
        /** Counted down when a description starts; each then waits for {@link #describeReleased}. */
        volatile CountDownLatch describeStarted = new CountDownLatch(0);
        volatile CountDownLatch describeReleased = new CountDownLatch(0);
        /** Each check waits for this many checks under way at once, a second at most. */
        volatile CountDownLatch checksTogether = new CountDownLatch(0);

        @Override
        public StreamDescription describe(ProducerSpec producer, String stream) throws IOException {
            descriptions.incrementAndGet();
            describeStarted.countDown();
            awaitQuietly(describeReleased, 30);
            return new StreamDescription(stream, "1", null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
        }

        @Override
        public void listShards(ProducerSpec producer, StreamDescription stream) {}

        @Override
        public boolean stillExists(ProducerSpec producer, StreamDescription stream) {
            checks.incrementAndGet();
            mostCheckingAtOnce.accumulateAndGet(checking.incrementAndGet(), Math::max);
            CountDownLatch together = checksTogether;
            together.countDown();
            awaitQuietly(together, 1);
            checking.decrementAndGet();
            return !gone.contains(stream.stream());
        }

        private static void awaitQuietly(CountDownLatch latch, long seconds) {
            try {
                latch.await(seconds, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The values of a write to {@code stream}, or (null) to the streams its rows name. */
    private static WriteOptions write(String stream) {
        return stream == null ? TestConfigs.read() : TestConfigs.read("streamName", stream);
    }

    /** The look of a write whose tasks list shards, as its plan is made from. */
    private static StreamLook.Look lookFor(StreamLook looks, WriteOptions write) {
        return looks.look(write, true);
    }

    private static StreamDescription met(String stream) {
        return new StreamDescription(stream, "1", null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
    }

    @Test
    public void aQuerysLookIsReusedWithinItsReuseTimeAndMadeAgainAfter() {
        AtomicLong now = new AtomicLong();
        FakeCalls kinesis = new FakeCalls();
        StreamLook look = new StreamLook(REUSE, kinesis, now::get);

        String first = lookFor(look, write("s")).id();
        now.set(REUSE - 1);
        assertEquals(first, lookFor(look, write("s")).id());
        now.set(REUSE);
        assertNotEquals(first, lookFor(look, write("s")).id());
        assertEquals(2, kinesis.descriptions.get());
    }

    /** A stream rows named in one micro-batch only may still be held, as described for the look, by an executor. */
    @Test
    public void aStreamMetNowAndThenIsCheckedBeforeTheLookIsReused() {
        AtomicLong now = new AtomicLong();
        FakeCalls kinesis = new FakeCalls();
        StreamLook look = new StreamLook(REUSE, kinesis, now::get);
        WriteOptions rowsNameStreams = write(null);

        StreamLook.Look first = lookFor(look, rowsNameStreams);
        assertEquals(Optional.empty(), look.confirmUnchanged(rowsNameStreams, first, List.of(met("now-and-then"))));
        StreamLook.Look second = lookFor(look, rowsNameStreams);
        assertEquals(Optional.empty(), look.confirmUnchanged(rowsNameStreams, second, List.of(met("every-batch"))));
        kinesis.gone.add("now-and-then");

        assertEquals(first.id(), second.id());
        assertNotEquals("a new look, so the executors describe the stream again", first.id(),
            lookFor(look, rowsNameStreams).id());
    }

    /** What reusing a look stands on is kept per look: a long query's streams do not pile up. */
    @Test
    public void aQueryMeetingTenThousandStreamsChecksOnlyThoseOfItsCurrentLook() {
        AtomicLong now = new AtomicLong();
        FakeCalls kinesis = new FakeCalls();
        StreamLook look = new StreamLook(REUSE, kinesis, now::get);
        WriteOptions rowsNameStreams = write(null);
        for (int batch = 0; batch < 100; batch++) {
            now.set(batch * REUSE); // each micro-batch a new look
            StreamLook.Look current = lookFor(look, rowsNameStreams);
            int from = batch * 100;
            look.confirmUnchanged(rowsNameStreams, current, IntStream.range(from, from + 100).mapToObj(i -> met("s" + i)).toList());
        }
        kinesis.checks.set(0);

        lookFor(look, rowsNameStreams);

        assertEquals("the last look's 100 streams, not the query's 10,000", 100, kinesis.checks.get());
    }

    /** The commit's confirmation names the stream created again, for the write to fail with; its look is not reused. */
    @Test
    public void aStreamCreatedAgainWhileTheWriteRanIsNamedAndItsLookForgotten() {
        FakeCalls kinesis = new FakeCalls();
        StreamLook look = new StreamLook(REUSE, kinesis, () -> 0);
        WriteOptions write = write("s");
        StreamLook.Look current = lookFor(look, write);
        kinesis.gone.add("s");

        assertEquals(Optional.of(new StreamLook.Recreated("s", "1")), look.confirmUnchanged(write, current, List.of()));
        kinesis.gone.clear();
        assertNotEquals(current.id(), lookFor(look, write).id());
    }

    @Test
    public void theStreamsOfACommitAreCheckedSideBySide() {
        FakeCalls kinesis = new FakeCalls();
        StreamLook look = new StreamLook(REUSE, kinesis, () -> 0);
        WriteOptions rowsNameStreams = write(null);
        StreamLook.Look current = lookFor(look, rowsNameStreams);
        kinesis.checksTogether = new CountDownLatch(6);

        long started = System.nanoTime();
        look.confirmUnchanged(rowsNameStreams, current, IntStream.range(0, 6).mapToObj(i -> met("s" + i)).toList());

        assertEquals(6, kinesis.mostCheckingAtOnce.get());
        assertTrue("six checks take one round trip", System.nanoTime() - started < TimeUnit.SECONDS.toNanos(1));
    }

    /** A look being described (Kinesis throttling it for up to 30 s) holds up no other look, nor its reuse check. */
    @Test
    public void aSlowDescriptionHoldsUpNoOtherLookAndItsOwnCallersShareIt() throws Exception {
        FakeCalls slowKinesis = new FakeCalls();
        slowKinesis.describeStarted = new CountDownLatch(1);
        slowKinesis.describeReleased = new CountDownLatch(1);
        StreamLook slow = new StreamLook(REUSE, slowKinesis, System::nanoTime);
        CompletableFuture<StreamLook.Look> first = CompletableFuture.supplyAsync(() -> lookFor(slow, write("slow")));
        assertTrue(slowKinesis.describeStarted.await(10, TimeUnit.SECONDS));
        CompletableFuture<StreamLook.Look> second = CompletableFuture.supplyAsync(() -> lookFor(slow, write("slow")));

        StreamLook other = new StreamLook(REUSE, new FakeCalls(), System::nanoTime);
        CompletableFuture<StreamLook.Look> elsewhere = CompletableFuture.supplyAsync(() -> lookFor(other, write("fast")));
        assertEquals("fast", elsewhere.get(5, TimeUnit.SECONDS).streams().keySet().iterator().next());

        slowKinesis.describeReleased.countDown();
        assertEquals(first.get(10, TimeUnit.SECONDS).id(), second.get(10, TimeUnit.SECONDS).id());
        assertEquals("the second caller waited for the first's description", 1, slowKinesis.descriptions.get());
    }
}
