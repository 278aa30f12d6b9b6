package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.Test;

/** One byte count for a record, Kinesis's: data plus the partition key's UTF-8 bytes. */
public class KinesisRecordTest {
    @Test
    public void aRecordCountsItsDataAndItsKeysUtf8BytesAsKinesisDoes() {
        String[] keys = {"k", "user-42", "ключ", "鍵", "😀 emoji", "lone \uD800 high", "lone \uDC00 low", "end \uD83D"};
        for (String key : keys) {
            KinesisRecord record = new KinesisRecord("s", key, "170141183460469231731687303715884105728", new byte[10]);
            assertEquals(key, 10 + key.getBytes(StandardCharsets.UTF_8).length, record.bytes());
        }
    }
}
