package sparkkpl.records;

import java.util.HashMap;
import java.util.Map;

/**
 * How many times each record digest was seen in one task, for the record-id header's occurrence
 * number. Every digest has to be remembered (any may repeat later), so the first sighting goes into
 * an open-addressing table of primitive longs (8 bytes a slot, at most half full: about 16 MB for a
 * partition of a million rows); only digests seen again take a map entry.
 */
final class DigestOccurrences {
    /** 0 marks a free slot; a digest that is 0 itself is kept aside. */
    private long[] slots = new long[1 << 10];
    private int size;
    private boolean zeroSeen;
    private final Map<Long, Integer> repeats = new HashMap<>();

    /** How many times {@code digest} was seen before; and counts this time. */
    int next(long digest) {
        if (addFirstSighting(digest)) {
            return 0;
        }
        return repeats.merge(digest, 1, Integer::sum);
    }

    private boolean addFirstSighting(long digest) {
        if (digest == 0) {
            boolean first = !zeroSeen;
            zeroSeen = true;
            return first;
        }
        int mask = slots.length - 1;
        for (int i = spread(digest) & mask; ; i = (i + 1) & mask) {
            if (slots[i] == digest) {
                return false;
            }
            if (slots[i] == 0) {
                slots[i] = digest;
                if (++size * 2 > slots.length) {
                    grow();
                }
                return true;
            }
        }
    }

    private void grow() {
        long[] old = slots;
        slots = new long[old.length * 2];
        int mask = slots.length - 1;
        for (long digest : old) {
            if (digest != 0) {
                int i = spread(digest) & mask;
                while (slots[i] != 0) {
                    i = (i + 1) & mask;
                }
                slots[i] = digest;
            }
        }
    }

    private static int spread(long digest) {
        return (int) (digest ^ (digest >>> 32));
    }
}
