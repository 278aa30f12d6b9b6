package sparkkpl.controlplane;

import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;

import org.junit.Test;

/** The looks streaming queries keep between micro-batches, and how they are forgotten. */
public class StreamLookTest {
    @Test
    public void aQuerysLookIsReusedWithinItsReuseTimeAndForgottenAfterEvenWhenNothingWasDescribed() {
        long start = System.nanoTime();
        StreamLook look = StreamLook.forQuery("query-whose-rows-name-every-stream", start);

        assertSame(look, StreamLook.forQuery("query-whose-rows-name-every-stream",
            start + StreamLook.MICRO_BATCH_REUSE_NANOS - 1));
        StreamLook.forQuery("another-query", start + StreamLook.MICRO_BATCH_REUSE_NANOS);

        assertNotSame("forgotten when another query asked for its own", look,
            StreamLook.forQuery("query-whose-rows-name-every-stream", start + StreamLook.MICRO_BATCH_REUSE_NANOS));
    }
}
