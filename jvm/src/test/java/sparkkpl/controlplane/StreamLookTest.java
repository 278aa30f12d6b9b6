package sparkkpl.controlplane;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.util.Set;
import org.junit.Test;
import sparkkpl.kinesis.StreamDescription;

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

    @Test
    public void aCommitsConfirmationStandsForTheNextMicroBatchOnlyForItsStreamsAndOnlyBriefly() {
        StreamDescription orders = new StreamDescription("orders", "1700000000", null, 1024);
        StreamDescription ordersAgain = new StreamDescription("orders", "1700000500", null, 1024);
        StreamDescription audit = new StreamDescription("audit", "1700000000", null, 1024);
        long checked = System.nanoTime();
        StreamLook.Confirmed confirmed = new StreamLook.Confirmed(Set.of(orders), checked);

        assertTrue(confirmed.covers(Set.of(orders), checked + StreamLook.CONFIRMED_REUSE_NANOS - 1));
        assertFalse("too old", confirmed.covers(Set.of(orders), checked + StreamLook.CONFIRMED_REUSE_NANOS));
        assertFalse("a stream the commit did not check", confirmed.covers(Set.of(orders, audit), checked));
        assertFalse("another incarnation", confirmed.covers(Set.of(ordersAgain), checked));
        assertFalse("nothing confirmed", StreamLook.Confirmed.NONE.covers(Set.of(), checked));
    }
}
