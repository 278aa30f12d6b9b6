package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class StreamArnTest {
    @Test
    public void readsNameRegionAndAccountInEveryPartition() {
        assertEquals(new StreamArn("aws", "eu-west-1", "123456789012", "events"),
            StreamArn.parse("arn:aws:kinesis:eu-west-1:123456789012:stream/events"));
        assertEquals("cn-north-1", StreamArn.parse("arn:aws-cn:kinesis:cn-north-1:123456789012:stream/a.b-c_d").region());
        StreamArn gov = StreamArn.parse("arn:aws-us-gov:kinesis:us-gov-west-1:210987654321:stream/x");
        assertEquals("aws-us-gov", gov.partition());
        assertEquals("arn:aws-us-gov:kinesis:us-gov-west-1:210987654321:stream/other", gov.sibling("other"));
    }

    @Test
    public void somethingElseIsRefusedShowingTheForm() {
        for (String bad : new String[] {"events", "arn:aws:kinesis:eu-west-1:1234:stream/events",
                "arn:aws:sqs:eu-west-1:123456789012:stream/events", "arn:aws:kinesis:eu-west-1:123456789012:events",
                "arn:aws:kinesis::123456789012:stream/events", "arn:aws:kinesis:eu-west-1:123456789012:stream/"}) {
            String message = assertThrows(IllegalArgumentException.class, () -> StreamArn.parse(bad)).getMessage();
            assertTrue(message, message.contains(StreamArn.FORM) && message.contains("'" + bad + "'"));
        }
    }

    @Test
    public void aRoleArnHasItsAccount() {
        assertEquals("123456789012", StreamArn.roleAccount("arn:aws:iam::123456789012:role/writer"));
        assertEquals("123456789012", StreamArn.roleAccount("arn:aws-cn:iam::123456789012:role/path/writer"));
        assertNull(StreamArn.roleAccount("writer"));
    }
}
