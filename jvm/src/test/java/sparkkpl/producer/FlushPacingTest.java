package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The spacing of the flushes waiting tasks make for the tasks after them. */
public class FlushPacingTest {
    private final FlushPacing pacing = new FlushPacing();

    @Test
    public void theSpacingKeepsFlushesToAQuarterOfADaemonCoreAtTheShardsMet() {
        assertEquals(TimeUnit.MICROSECONDS.toNanos(600), FlushPacing.spacingNanos(0));
        assertEquals(TimeUnit.MICROSECONDS.toNanos(728), FlushPacing.spacingNanos(16));
        assertEquals(TimeUnit.MICROSECONDS.toNanos(33_368), FlushPacing.spacingNanos(4_096));
    }

    @Test
    public void aFlushIsDueOnceTheSpacingHasPassedSinceTheLastOneWhoeverMadeIt() {
        long spacing = FlushPacing.spacingNanos(16);
        pacing.flushed(1_000_000);

        assertFalse(pacing.claim(1_000_000 + spacing - 1, 16));
        assertTrue(pacing.claim(1_000_000 + spacing, 16));
        assertFalse("claimed: another task asking at the same time does not flush again",
            pacing.claim(1_000_000 + spacing, 16));
        assertFalse("more shards met, a wider spacing", pacing.claim(1_000_000 + 2 * spacing, 4_096));
    }
}
