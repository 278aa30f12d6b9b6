package sparkkpl.controlplane;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.After;
import org.junit.Test;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;

/** One producer's shard maps: when a stream is listed again, and that tasks asking together share a listing. */
public class ShardMapsTest {
    private final AtomicLong clock = new AtomicLong(1_000);
    private final FakeLister lister = new FakeLister(clock::get);
    private final ShardMaps maps = new ShardMaps(lister, clock::get);
    private final ExecutorService tasks = Executors.newCachedThreadPool();

    @After
    public void stopTasks() {
        tasks.shutdownNow();
    }

    @Test
    public void aMapServesItsIncarnationUntilItIsTooOld() throws Exception {
        ShardMap first = maps.current("s", "t1");
        clock.addAndGet(ShardMaps.MAX_AGE_NANOS - 1);
        assertSame(first, maps.current("s", "t1"));
        assertEquals(1, lister.listings.get());

        clock.addAndGet(1);
        assertNotSame("listed again once as old as the maximum", first, maps.current("s", "t1"));
        assertEquals(2, lister.listings.get());
    }

    @Test
    public void theShardsListedAreThoseOfEachStreamsLatestMap() throws Exception {
        assertEquals(0, maps.shardsListed());
        maps.current("s", "t1");
        maps.current("s", "t2");
        maps.current("other", null);

        assertEquals("one shard per stream in the fake's maps, the older incarnation's not counted",
            2, maps.shardsListed());
    }

    @Test
    public void aStreamCreatedAgainOrAMapRetiredIsListedAgain() throws Exception {
        ShardMap first = maps.current("s", "t1");
        ShardMap recreated = maps.current("s", "t2");
        assertEquals("t2", recreated.created());
        recreated.retire();
        assertNotSame(recreated, maps.current("s", "t2"));
        assertEquals(3, lister.listings.get());
        assertEquals("t1", first.created());
    }

    @Test
    public void aTaskThatFoundItsMapWrongGetsAnotherTasksNewerOneWithoutListing() throws Exception {
        ShardMap stale = maps.current("s", null);
        clock.addAndGet(1);
        ShardMap newer = maps.listedAfter("s", null, stale);
        assertEquals(2, lister.listings.get());

        assertSame("a second task with the same stale map", newer, maps.listedAfter("s", null, stale));
        assertEquals(2, lister.listings.get());
    }

    @Test
    public void tasksAskingTogetherShareOneListing() throws Exception {
        lister.started = new CountDownLatch(1);
        lister.release = new CountDownLatch(1);
        Future<ShardMap> first = tasks.submit(() -> maps.current("s", null));
        assertTrue(lister.started.await(10, TimeUnit.SECONDS));
        Future<ShardMap> second = tasks.submit(() -> maps.current("s", null));
        Thread.sleep(100); // the second task is waiting for the first one's listing, not listing itself
        lister.release.countDown();

        assertSame(first.get(10, TimeUnit.SECONDS), second.get(10, TimeUnit.SECONDS));
        assertEquals(1, lister.listings.get());
    }

    @Test
    public void aStreamOnlyRowsNameIsDescribedOncePerMaximumAge() throws Exception {
        maps.describedForRows("named-by-rows", "look");
        clock.addAndGet(ShardMaps.DESCRIPTION_MAX_AGE_NANOS - 1);
        maps.describedForRows("named-by-rows", "look");
        assertEquals(1, lister.descriptions.get());
        clock.addAndGet(1);
        maps.describedForRows("named-by-rows", "look");
        assertEquals(2, lister.descriptions.get());
    }

    @Test
    public void aStreamOnlyRowsNameIsDescribedAgainForTheDriversNextLook() throws Exception {
        lister.created.put("named-by-rows", "1700000000");
        assertEquals("1700000000", maps.describedForRows("named-by-rows", "first write").created());
        lister.created.put("named-by-rows", "1700000100"); // deleted and created again between two writes
        assertEquals("1700000000", maps.describedForRows("named-by-rows", "first write").created());
        assertEquals("the next write sees the stream that has the name now",
            "1700000100", maps.describedForRows("named-by-rows", "next write").created());
        assertEquals(2, lister.descriptions.get());
    }

    @Test
    public void aQueryMeetingTenThousandStreamNamesKeepsOnlyThoseItMetLately() throws Exception {
        for (int i = 0; i < 10_000; i++) {
            maps.current("name-" + i, null);
            maps.describedForRows("name-" + i, "look");
        }
        clock.addAndGet(ShardMaps.DESCRIPTION_MAX_AGE_NANOS);
        maps.current("lately", null);

        assertEquals(1, maps.streamsHeld());
    }

    @Test
    public void aTaskKilledWhileItsListingIsSharedFailsAloneAndTheOthersGetTheMap() throws Exception {
        lister.started = new CountDownLatch(1);
        lister.release = new CountDownLatch(1);
        Future<ShardMap> speculative = tasks.submit(() -> maps.current("s", null));
        assertTrue(lister.started.await(10, TimeUnit.SECONDS));
        Future<ShardMap> other = tasks.submit(() -> maps.current("s", null));
        Thread.sleep(100); // the other task is waiting for the listing the first one started

        speculative.cancel(true); // Spark kills a speculative attempt by interrupting its thread
        Thread.sleep(100);
        lister.release.countDown();

        assertEquals("shardId-0", other.get(10, TimeUnit.SECONDS).shards().get(0).id());
        assertEquals(1, lister.listings.get());
    }

    @Test
    public void aTaskKilledWhileItsDescriptionIsSharedFailsAloneAndTheOthersGetIt() throws Exception {
        lister.describeStarted = new CountDownLatch(1);
        lister.descriptionsLetThrough.drainPermits();
        Future<StreamDescription> speculative = tasks.submit(() -> maps.describedForRows("s", "look"));
        assertTrue(lister.describeStarted.await(10, TimeUnit.SECONDS));
        Future<StreamDescription> other = tasks.submit(() -> maps.describedForRows("s", "look"));
        Thread.sleep(100);

        speculative.cancel(true);
        Thread.sleep(100);
        lister.descriptionsLetThrough.release(Integer.MAX_VALUE);

        assertEquals("s", other.get(10, TimeUnit.SECONDS).stream());
        assertEquals(1, lister.descriptions.get());
    }

    @Test
    public void aListingThatDiesOfAnErrorFailsEveryTaskWaitingForItAndTheNextTaskListsAgain() throws Exception {
        lister.started = new CountDownLatch(1);
        lister.release = new CountDownLatch(1);
        lister.listingDies = new NoClassDefFoundError("a class of the shaded AWS SDK");
        Future<ShardMap> first = tasks.submit(() -> maps.current("s", null));
        assertTrue(lister.started.await(10, TimeUnit.SECONDS));
        Future<ShardMap> second = tasks.submit(() -> maps.current("s", null));
        Thread.sleep(100); // the second task is waiting for the first one's listing

        lister.release.countDown();

        for (Future<ShardMap> task : List.of(first, second)) {
            ExecutionException failed = assertThrows(ExecutionException.class, () -> task.get(10, TimeUnit.SECONDS));
            assertSame(lister.listingDies, failed.getCause());
        }
        lister.listingDies = null;
        maps.current("s", null);
        assertEquals(2, lister.listings.get());
    }

    @Test
    public void tasksDescribingAStreamTogetherShareOneCallAndItsFailureWhileItsMapStaysAvailable() throws Exception {
        lister.describeStarted = new CountDownLatch(1);
        lister.descriptionsLetThrough.drainPermits();
        lister.describingRefused = true;
        Future<StreamDescription> first = tasks.submit(() -> maps.describedForRows("named-by-rows", "look"));
        assertTrue(lister.describeStarted.await(10, TimeUnit.SECONDS));
        Future<StreamDescription> second = tasks.submit(() -> maps.describedForRows("named-by-rows", "look"));
        Future<ShardMap> listing = tasks.submit(() -> maps.current("named-by-rows", null));
        assertEquals(1, listing.get(10, TimeUnit.SECONDS).shards().size());
        Thread.sleep(100); // the second task is waiting for the first one's description

        lister.descriptionsLetThrough.release(1);

        for (Future<StreamDescription> task : List.of(first, second)) {
            ExecutionException failed = assertThrows(ExecutionException.class, () -> task.get(10, TimeUnit.SECONDS));
            assertTrue(failed.getCause().getMessage(), failed.getCause().getMessage().contains("AccessDenied"));
        }
        assertEquals("one call for both tasks", 1, lister.descriptions.get());
        lister.describingRefused = false;
        lister.descriptionsLetThrough.release(1);
        assertEquals("named-by-rows", maps.describedForRows("named-by-rows", "look").stream());
        assertEquals("the next task after a failure asks again", 2, lister.descriptions.get());
    }

    @Test
    public void closingTheMapsClosesTheirLister() {
        maps.close();
        assertTrue(lister.closed);
    }
}
