package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.After;
import org.junit.Test;

/** One producer's shard maps: when a stream is listed again, and that tasks asking together share a listing. */
public class ShardMapsTest {
    private final AtomicLong clock = new AtomicLong(1_000);
    private final FakeLister lister = new FakeLister(clock::get);
    private final ShardMaps maps = new ShardMaps(lister, clock::get);
    private final ExecutorService tasks = Executors.newFixedThreadPool(2);

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
    public void closingTheMapsClosesTheirLister() {
        maps.close();
        assertTrue(lister.closed);
    }
}
