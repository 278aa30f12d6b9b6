package sparkkpl.config;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

public class StreamArnOptionTest {
    private static final String ARN = "arn:aws:kinesis:eu-west-1:123456789012:stream/events";

    private static WriteOptions read(String... namesAndValues) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            options.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return WriteConfig.read(Map.of(), options).options();
    }

    private static String errorOf(String... namesAndValues) {
        return assertThrows(IllegalArgumentException.class, () -> read(namesAndValues)).getMessage();
    }

    private static void assertContains(String message, String... parts) {
        for (String part : parts) {
            assertTrue("'" + message + "' should contain '" + part + "'", message.contains(part));
        }
    }

    @Test
    public void theArnGivesTheStreamNameAndTheKplRegion() {
        WriteOptions options = read("streamArn", ARN);
        assertEquals("events", options.target().streamName());
        assertEquals("eu-west-1", options.producer().kplConfiguration().getRegion());
        assertEquals(ARN, options.producer().streamArn());
        assertNull(read("streamName", "events", "Region", "eu-west-1").producer().streamArn());
    }

    @Test
    public void theSameNameAndRegionMayBeGivenToo() {
        WriteOptions options = read("streamArn", ARN, "streamName", "events", "Region", "eu-west-1");
        assertEquals("events", options.target().streamName());
        Map<String, String> conf = Map.of(SinkOption.STREAM_ARN.confKey(), ARN);
        assertEquals("events", WriteConfig.read(conf, Map.of()).options().target().streamName());
    }

    @Test
    public void aMalformedArnNamesTheOptionAndTheForm() {
        assertContains(errorOf("streamArn", "events"), "'streamArn' (spark.kpl.streamArn)",
            "arn:aws:kinesis:REGION:ACCOUNT:stream/NAME", "'events'");
    }

    @Test
    public void disagreementsNameBoth() {
        assertContains(errorOf("streamArn", ARN, "streamName", "orders"), "'streamName' ('orders')",
            "'streamArn' ('" + ARN + "')");
        assertContains(errorOf("streamArn", ARN, "Region", "us-east-1"), "'Region' (us-east-1)", "(eu-west-1");
    }

    @Test
    public void aRoleMustBeOfTheStreamsAccount() {
        assertContains(errorOf("streamArn", ARN, "awsRoleArn", "arn:aws:iam::210987654321:role/writer"),
            "not a role of account 123456789012", "by name only", "set awsRoleArn to a role in account 123456789012");
        assertEquals("events", read("streamArn", ARN, "awsRoleArn", "arn:aws:iam::123456789012:role/writer")
            .target().streamName());
    }

    @Test
    public void anStsEndpointAsksTheCallersAccountWithoutARole() {
        assertEquals("http://127.0.0.1:1", read("streamArn", ARN, "awsStsEndpoint", "http://127.0.0.1:1")
            .producer().credentials().stsEndpoint());
    }
}
