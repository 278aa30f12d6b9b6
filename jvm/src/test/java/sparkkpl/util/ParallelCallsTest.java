package sparkkpl.util;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.Test;

/** Callers' calls side by side on a shared pool, none queued behind another caller's. */
public class ParallelCallsTest {
    private static long poolThreads() {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.getName().startsWith(RemoteCallPool.THREAD_NAME)).count();
    }

    @Test
    public void answersComeInTheItemsOrder() {
        assertEquals(List.of(0, 2, 4, 6, 8, 10, 12, 14, 16, 18),
            ParallelCalls.each(IntStream.range(0, 10).boxed().toList(), i -> i * 2));
    }

    @Test
    public void aCallerWhoFindsEveryThreadBusyMakesItsCallsItselfAndTheThreadsStayBounded() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger held = new AtomicInteger();
        ExecutorService callers = Executors.newFixedThreadPool(4);
        try {
            List<Integer> slowItems = IntStream.range(0, 20).boxed().toList();
            List<CompletableFuture<List<Integer>>> slow = IntStream.range(0, 4)
                .mapToObj(caller -> CompletableFuture.supplyAsync(() -> ParallelCalls.each(slowItems, i -> {
                    held.incrementAndGet();
                    try {
                        release.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    return i;
                }), callers)).toList();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // every pool thread, and each slow caller's own
            while (held.get() < RemoteCallPool.THREADS + 4 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }

            Thread caller = Thread.currentThread();
            List<Boolean> mine = ParallelCalls.each(List.of(1, 2, 3), i -> Thread.currentThread() == caller);

            assertEquals("made on the caller's own thread, the pool's all taken", List.of(true, true, true), mine);
            assertEquals(RemoteCallPool.THREADS, poolThreads());
            release.countDown();
            for (CompletableFuture<List<Integer>> each : slow) {
                assertEquals(slowItems, each.get(30, TimeUnit.SECONDS));
            }
        } finally {
            release.countDown();
            callers.shutdownNow();
        }
        assertTrue(poolThreads() <= RemoteCallPool.THREADS);
    }
}
