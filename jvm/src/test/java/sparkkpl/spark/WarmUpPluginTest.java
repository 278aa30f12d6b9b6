package sparkkpl.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;
import sparkkpl.producer.ProducerRegistry;

/** The row path's warm-up runs to its end on its own thread, with no producer, daemon or network. */
public class WarmUpPluginTest {
    @Test
    public void theWarmUpRunsEveryRowThroughOnItsThreadAndStartsNoProducer() throws InterruptedException {
        RowPathWarmUp warmUp = new RowPathWarmUp(20_000);

        Thread thread = WarmUpPlugin.start(warmUp);
        thread.join(120_000);

        assertFalse("ended", thread.isAlive());
        assertEquals(WarmUpPlugin.THREAD, thread.getName());
        assertTrue("a daemon: it never holds the JVM up", thread.isDaemon());
        assertEquals(20_000, warmUp.rowsThrough());
        assertTrue("aggregates of about 500 rows were built: " + warmUp.sealed(),
            warmUp.sealed() >= 20_000 / 600 && warmUp.sealed() < 20_000 / 50);
        assertTrue("no producer started", ProducerRegistry.stats().isEmpty());
    }
}
