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
        long first = System.nanoTime();
        assertTrue("none came within the spacing", pacing.claim(first, spacing));

        assertFalse(pacing.claim(first + spacing - 1, spacing));
        assertTrue(pacing.claim(first + spacing, spacing));
        assertFalse("claimed: another task asking at the same time does not flush again",
            pacing.claim(first + spacing, spacing));
        assertFalse("a task blocked at the queue limit counts that flush too",
            pacing.claim(first + spacing + FlushPacing.BLOCKED_SPACING_NANOS - 1, FlushPacing.BLOCKED_SPACING_NANOS));
    }
}
