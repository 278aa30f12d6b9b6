package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.math.BigInteger;
import org.junit.Test;

public class RecordRulesTest {
    private static final String MAX = BigInteger.ONE.shiftLeft(128).subtract(BigInteger.ONE).toString();

    @Test
    public void explicitHashKeysBigIntegerReadsComeOutAsKinesissPatternAsks() {
        assertEquals("5", RecordRules.canonicalExplicitHashKey("+5"));
        assertEquals("7", RecordRules.canonicalExplicitHashKey("007"));
        assertEquals("0", RecordRules.canonicalExplicitHashKey("000"));
        assertEquals("0", RecordRules.canonicalExplicitHashKey("-0"));
        assertEquals("9", RecordRules.canonicalExplicitHashKey("0".repeat(45) + "9"));
        assertEquals(MAX, RecordRules.canonicalExplicitHashKey("+" + MAX));
        assertEquals("as the KPL's own BigInteger reads it", "5", RecordRules.canonicalExplicitHashKey("\u0665"));
        String canonical = "12345";
        assertTrue("a canonical key is kept as it is", canonical == RecordRules.canonicalExplicitHashKey(canonical));
    }

    @Test
    public void explicitHashKeysOutsideTheHashSpaceOrNotDecimalAreRefused() {
        String beyond = BigInteger.ONE.shiftLeft(128).toString();
        for (String key : new String[] {beyond, "9".repeat(39), "1".repeat(40), "-1", "", " 5", "0x10", "1e3"}) {
            assertThrows(key, IllegalArgumentException.class, () -> RecordRules.canonicalExplicitHashKey(key));
        }
    }

    @Test
    public void partitionKeysAreCountedInUtf16Units() {
        String emoji = "\uD83D\uDE00";
        RecordRules.checkPartitionKey(emoji.repeat(128));
        RecordRules.checkPartitionKey("p".repeat(256));
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
            () -> RecordRules.checkPartitionKey(emoji.repeat(129)));
        assertTrue(tooLong.getMessage(), tooLong.getMessage().endsWith("has 258 (129 characters)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RecordRules.checkPartitionKey("p".repeat(257)))
            .getMessage().endsWith("has 257"));
    }
}
