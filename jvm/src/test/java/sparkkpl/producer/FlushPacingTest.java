package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The spacing of the flushes waiting tasks ask for. */
public class FlushPacingTest {
    private final FlushPacing pacing = new FlushPacing();

    @Test
    public void theSpacingKeepsFlushesToAQuarterOfADaemonCoreAtTheShardsMet() {
        assertEquals(TimeUnit.MICROSECONDS.toNanos(600), FlushPacing.laterTasksSpacingNanos(0));
        assertEquals(TimeUnit.MICROSECONDS.toNanos(728), FlushPacing.laterTasksSpacingNanos(16));
        assertEquals(TimeUnit.MICROSECONDS.toNanos(33_368), FlushPacing.laterTasksSpacingNanos(4_096));
    }

    @Test
    public void aFlushIsDueOnceTheSpacingHasPassedSinceTheLastOneWhoeverMadeIt() {
        long spacing = FlushPacing.laterTasksSpacingNanos(16);
        pacing.flushed(1_000_000);

        assertFalse(pacing.claim(1_000_000 + spacing - 1, spacing));
        assertTrue(pacing.claim(1_000_000 + spacing, spacing));
        assertFalse("claimed: another task asking at the same time does not flush again",
            pacing.claim(1_000_000 + spacing, spacing));
        assertFalse("a task blocked at the queue cap counts that flush too",
            pacing.claim(1_000_000 + spacing + FlushPacing.BLOCKED_SPACING_NANOS - 1, FlushPacing.BLOCKED_SPACING_NANOS));
    }
}
