package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.math.BigInteger;
import org.junit.Test;

public class HashKeyTest {
    private static final BigInteger MAX = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE);
    private static final BigInteger HALF = BigInteger.ONE.shiftLeft(127);

    @Test
    public void keepsEveryNumberOfTheRange() {
        for (BigInteger value : new BigInteger[] {BigInteger.ZERO, BigInteger.ONE, BigInteger.ONE.shiftLeft(63),
                BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE), BigInteger.ONE.shiftLeft(64), HALF, MAX}) {
            assertEquals(value, HashKey.of(value).toBigInteger());
            assertEquals(value.toString(), HashKey.of(value).toString());
        }
    }

    @Test
    public void ordersAsUnsignedNumbers() {
        // Halves with the top bit set are negative as Java longs; they are the upper half of the range.
        BigInteger[] ascending = {BigInteger.ZERO, BigInteger.ONE.shiftLeft(63), BigInteger.ONE.shiftLeft(64),
            HALF.subtract(BigInteger.ONE), HALF, MAX};
        for (int i = 1; i < ascending.length; i++) {
            assertTrue(ascending[i - 1] + " < " + ascending[i],
                HashKey.of(ascending[i - 1]).compareTo(HashKey.of(ascending[i])) < 0);
        }
    }

    @Test
    public void refusesNumbersOutsideTheRange() {
        assertThrows(IllegalArgumentException.class, () -> HashKey.of(BigInteger.ONE.negate()));
        assertThrows(IllegalArgumentException.class, () -> HashKey.of(MAX.add(BigInteger.ONE)));
    }
}
