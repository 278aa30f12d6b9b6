package sparkkpl.records;

import static org.junit.Assert.assertArrayEquals;

import java.util.Arrays;
import java.util.stream.LongStream;
import org.junit.Test;

/** How many times each digest came before, for the record-id header's occurrence number. */
public class DigestOccurrencesTest {
    /** Each digest's occurrence number, seen in this order by one task. */
    private static int[] occurrences(long... digests) {
        DigestOccurrences occurrences = new DigestOccurrences();
        return Arrays.stream(digests).mapToInt(occurrences::next).toArray();
    }

    @Test
    public void eachDigestCountsItsOwnEarlierSightings() {
        assertArrayEquals(new int[] {0, 0, 1, 2, 1}, occurrences(7, 8, 7, 7, 8));
    }

    @Test
    public void zeroIsADigestLikeAnyOther() {
        assertArrayEquals(new int[] {0, 1, 0}, occurrences(0, 0, 1));
    }

    @Test
    public void everyDigestIsRememberedAsTheTableGrows() {
        long[] distinct = LongStream.rangeClosed(1, 10_000).map(i -> i * 0x9E3779B97F4A7C15L).toArray();
        int[] seen = occurrences(LongStream.concat(Arrays.stream(distinct), Arrays.stream(distinct)).toArray());

        int[] expected = new int[seen.length];
        Arrays.fill(expected, distinct.length, expected.length, 1);
        assertArrayEquals(expected, seen);
    }
}
