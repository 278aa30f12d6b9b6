package sparkkpl.util;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** Entries not used lately forgotten, at most once per interval, whoever asks. */
public class IdleSweepTest {
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

    private static final class Entry {
        final long usedAt;

        Entry(long usedAt) {
            this.usedAt = usedAt;
        }
    }

    @Test
    public void forgetsOnlyTheEntriesUnusedLatelyAndOnlyOncePerInterval() {
        IdleSweep sweep = new IdleSweep(MINUTE, 0);
        List<Entry> entries = new ArrayList<>(List.of(new Entry(0), new Entry(MINUTE)));

        sweep.sweep(entries, MINUTE - 1, entry -> true);
        assertEquals("within the first interval: nothing swept", 2, entries.size());

        sweep.sweep(entries, MINUTE + 10, entry -> MINUTE + 10 - entry.usedAt >= MINUTE);
        assertEquals(1, entries.size());
        assertEquals(MINUTE, entries.get(0).usedAt);

        sweep.sweep(entries, MINUTE + 20, entry -> true);
        assertEquals("swept a moment ago: not again before an interval", 1, entries.size());
        sweep.sweep(entries, 2 * MINUTE + 10, entry -> true);
        assertEquals(0, entries.size());
    }
}
