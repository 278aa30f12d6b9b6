package sparkkpl.kinesis;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.math.BigInteger;
import java.nio.ByteOrder;

/**
 * A Kinesis hash key, an unsigned 128-bit number, as its two 64-bit halves: routing a row compares
 * two longs instead of building a {@link BigInteger} from its key's MD5.
 */
public record HashKey(long high, long low) implements Comparable<HashKey> {
    private static final VarHandle BIG_ENDIAN_LONG =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** @param value a number in 0 to 2^128-1 */
    public static HashKey of(BigInteger value) {
        if (value.signum() < 0 || value.bitLength() > 128) {
            throw new IllegalArgumentException("a hash key lies in 0 to 2^128-1, got " + value);
        }
        return new HashKey(value.shiftRight(64).longValue(), value.longValue());
    }

    /** The 16 bytes of an MD5 digest, read as Kinesis reads them: one big-endian unsigned number. */
    static HashKey ofDigest(byte[] md5) {
        return new HashKey((long) BIG_ENDIAN_LONG.get(md5, 0), (long) BIG_ENDIAN_LONG.get(md5, 8));
    }

    public BigInteger toBigInteger() {
        byte[] bytes = new byte[16];
        BIG_ENDIAN_LONG.set(bytes, 0, high);
        BIG_ENDIAN_LONG.set(bytes, 8, low);
        return new BigInteger(1, bytes);
    }

    @Override
    public int compareTo(HashKey other) {
        int byHigh = Long.compareUnsigned(high, other.high);
        return byHigh != 0 ? byHigh : Long.compareUnsigned(low, other.low);
    }

    /** Decimal, as Kinesis writes hash keys (an explicit hash key, a shard's range). */
    @Override
    public String toString() {
        return toBigInteger().toString();
    }
}
