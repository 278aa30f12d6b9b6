package sparkkpl.kinesis;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The hash key Kinesis routes a record by, and that a KCL consumer checks every sub-record of an
 * aggregate against: the explicit hash key when there is one, else the MD5 of the partition key's
 * UTF-8 bytes read as an unsigned 128-bit number.
 */
public final class HashKeys {
    private static final ThreadLocal<MessageDigest> MD5 = ThreadLocal.withInitial(HashKeys::newMd5);

    private HashKeys() {}

    /**
     * @param explicitHashKey a decimal key already checked to lie in 0 to 2^128-1, or null
     */
    public static HashKey effective(String partitionKey, String explicitHashKey) {
        return effective(partitionKey.getBytes(StandardCharsets.UTF_8), explicitHashKey);
    }

    /** As {@link #effective(String, String)}, for a partition key already encoded to UTF-8. */
    public static HashKey effective(byte[] partitionKeyUtf8, String explicitHashKey) {
        if (explicitHashKey != null) {
            return HashKey.of(new BigInteger(explicitHashKey.trim()));
        }
        return HashKey.ofDigest(md5(partitionKeyUtf8));
    }

    public static byte[] md5(byte[] bytes) {
        return MD5.get().digest(bytes);
    }

    public static byte[] md5(byte[] bytes, int offset, int length) {
        MessageDigest md5 = MD5.get();
        md5.update(bytes, offset, length);
        return md5.digest();
    }

    private static MessageDigest newMd5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has MD5", e);
        }
    }
}
