package sparkkpl.records;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** How many times each digest came before, for the record-id header's occurrence number. */
public class DigestOccurrencesTest {
    @Test
    public void eachDigestCountsItsOwnEarlierSightings() {
        DigestOccurrences occurrences = new DigestOccurrences();

        assertEquals(0, occurrences.next(7));
        assertEquals(0, occurrences.next(8));
        assertEquals(1, occurrences.next(7));
        assertEquals(2, occurrences.next(7));
        assertEquals(1, occurrences.next(8));
    }

    @Test
    public void zeroIsADigestLikeAnyOther() {
        DigestOccurrences occurrences = new DigestOccurrences();

        assertEquals(0, occurrences.next(0));
        assertEquals(1, occurrences.next(0));
        assertEquals(0, occurrences.next(1));
    }

    @Test
    public void everyDigestIsRememberedAsTheTableGrows() {
        DigestOccurrences occurrences = new DigestOccurrences();
        int distinct = 10_000;
        for (long digest = 1; digest <= distinct; digest++) {
            assertEquals(0, occurrences.next(digest * 0x9E3779B97F4A7C15L));
        }
        for (long digest = 1; digest <= distinct; digest++) {
            assertEquals(1, occurrences.next(digest * 0x9E3779B97F4A7C15L));
        }
    }
}
