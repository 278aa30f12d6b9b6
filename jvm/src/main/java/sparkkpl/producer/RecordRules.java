package sparkkpl.producer;

import java.math.BigInteger;

/** Kinesis's rules for a record's keys, checked before the KPL sees the record so errors can name the row. */
public final class RecordRules {
    static final int MAX_PARTITION_KEY_CHARS = 256;
    private static final BigInteger MAX_HASH_KEY = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE);

    private RecordRules() {}

    /** @throws IllegalArgumentException saying what is wrong with the key */
    public static void checkPartitionKey(String key) {
        int chars = key.codePointCount(0, key.length());
        if (chars < 1 || chars > MAX_PARTITION_KEY_CHARS) {
            throw new IllegalArgumentException("partition key must have 1 to " + MAX_PARTITION_KEY_CHARS
                + " characters, has " + chars);
        }
    }

    /** @throws IllegalArgumentException unless the key is a decimal integer in 0 to 2^128-1 */
    public static void checkExplicitHashKey(String key) {
        BigInteger value;
        try {
            value = new BigInteger(key);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("explicit hash key must be a decimal integer in 0 to 2^128-1, got '"
                + key + "'", e);
        }
        if (value.signum() < 0 || value.compareTo(MAX_HASH_KEY) > 0) {
            throw new IllegalArgumentException("explicit hash key must be in 0 to 2^128-1, got " + key);
        }
    }
}
