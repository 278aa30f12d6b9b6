package sparkkpl.controlplane;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.Test;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import sparkkpl.config.TestConfigs;

/** The sink's own Kinesis client: VerifyCertificate=false warns, except against an endpoint on this machine. */
public class StreamApiTest {
    private static final String SDK_WARNING = "SSL Certificate verification is disabled";

    /** What the SDK's HTTP client logs while the StreamApi for {@code endpoint}, trusting every certificate, is made. */
    private static List<String> loggedMaking(String endpoint) {
        List<String> logged = new CopyOnWriteArrayList<>();
        AbstractAppender collect = new AbstractAppender("collect", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                logged.add(event.getMessage().getFormattedMessage());
            }
        };
        Logger sdk = (Logger) LogManager.getLogger(ApacheHttpClient.class);
        Level before = sdk.getLevel();
        collect.start();
        sdk.addAppender(collect);
        sdk.setLevel(Level.WARN);
        try {
            StreamApi.open(TestConfigs.producer("KinesisEndpoint", endpoint, "VerifyCertificate", "false",
                "awsAccessKeyId", "id", "awsSecretAccessKey", "secret")).close();
        } finally {
            sdk.removeAppender(collect);
            sdk.setLevel(before);
        }
        return logged;
    }

    @Test
    public void aClientForAnEndpointOnThisMachineDoesNotWarnAboutTrustingItsCertificate() {
        assertEquals(List.of(), loggedMaking("127.0.0.1"));
        assertEquals(List.of(), loggedMaking("localhost"));
    }

    @Test
    public void aClientForAnyOtherEndpointStillWarns() {
        List<String> logged = loggedMaking("192.0.2.10");

        assertTrue(logged.toString(), logged.stream().anyMatch(line -> line.startsWith(SDK_WARNING)));
    }
}
