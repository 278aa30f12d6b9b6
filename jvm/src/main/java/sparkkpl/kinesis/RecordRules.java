package sparkkpl.kinesis;

import java.math.BigInteger;

/** Kinesis's rules for a record's keys, checked before the KPL sees the record so errors can name the row. */
public final class RecordRules {
    /**
     * Kinesis documents 256 Unicode characters; the KPL refuses a key whose Java {@code length()}
     * (UTF-16 code units) is over 256. Counted as the KPL counts, every key the sink sends passes both,
     * alone or inside an aggregate.
     */
    static final int MAX_PARTITION_KEY_UNITS = 256;
    private static final BigInteger MAX_HASH_KEY = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE);
    /** The most digits a canonical key has: 2^128-1 has 39, as Kinesis's pattern {@code 0|([1-9]\d{0,38})} allows. */
    private static final int MAX_CANONICAL_DIGITS = 39;

    private RecordRules() {}

    /** @throws IllegalArgumentException saying what is wrong with the key */
    public static void checkPartitionKey(String key) {
        int units = key.length();
        if (units < 1 || units > MAX_PARTITION_KEY_UNITS) {
            int characters = key.codePointCount(0, units);
            throw new IllegalArgumentException("partition key must have 1 to " + MAX_PARTITION_KEY_UNITS
                + " UTF-16 code units (the KPL's count: an emoji takes 2), has " + units + (characters == units ? "" : " (" + characters + " characters)"));
        }
    }

    /**
     * The key in the form Kinesis's API takes ({@code 0|([1-9]\d{0,38})}): a key that
     * {@link BigInteger} reads with a sign or leading zeros ({@code +5}, {@code 007}) names the same
     * hash key, so it is written as Kinesis and the KPL's daemon write it ({@code 5}, {@code 7}).
     *
     * @throws IllegalArgumentException unless the key is a decimal integer in 0 to 2^128-1
     */
    public static String canonicalExplicitHashKey(String key) {
        if (isCanonical(key)) {
            if (key.length() < MAX_CANONICAL_DIGITS || key.compareTo(MAX_HASH_KEY.toString()) <= 0) {
                return key;
            }
            throw outOfRange(key);
        }
        BigInteger value;
        try {
            value = new BigInteger(key);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("explicit hash key must be a decimal integer in 0 to 2^128-1, got '"
                + key + "'", e);
        }
        if (value.signum() < 0 || value.compareTo(MAX_HASH_KEY) > 0) {
            throw outOfRange(key);
        }
        return value.toString();
    }

    /** Whether the key matches Kinesis's pattern: checked by hand, as this runs for every row with a key. */
    private static boolean isCanonical(String key) {
        int length = key.length();
        if (length == 0 || length > MAX_CANONICAL_DIGITS || (key.charAt(0) == '0' && length > 1)) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char c = key.charAt(i);
            if (c < '0' || c > '9') {
                return false;
            }
        }
        return true;
    }

    private static IllegalArgumentException outOfRange(String key) {
        return new IllegalArgumentException("explicit hash key must be in 0 to 2^128-1, got " + key);
    }
}
