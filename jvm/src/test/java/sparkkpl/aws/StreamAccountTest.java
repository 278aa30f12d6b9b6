package sparkkpl.aws;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import sparkkpl.config.TestConfigs;

public class StreamAccountTest {
    private static final String CALLER = "111111111111";
    private HttpServer sts;
    private final AtomicInteger asked = new AtomicInteger();

    /** An STS on loopback whose GetCallerIdentity answers account {@link #CALLER}, to any caller. */
    @Before
    public void startSts() throws IOException {
        sts = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        sts.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            asked.incrementAndGet();
            byte[] answer = ("<GetCallerIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
                + "<GetCallerIdentityResult><Arn>arn:aws:iam::" + CALLER + ":user/u</Arn><UserId>AIDAU</UserId>"
                + "<Account>" + CALLER + "</Account></GetCallerIdentityResult></GetCallerIdentityResponse>")
                .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "text/xml");
            exchange.sendResponseHeaders(200, answer.length);
            try (OutputStream body = exchange.getResponseBody()) {
                body.write(answer);
            }
        });
        sts.start();
    }

    @After
    public void stopSts() {
        sts.stop(0);
    }

    private void check(String streamArn, String... more) {
        String[] options = new String[more.length + 8];
        String[] given = {"streamArn", streamArn, "awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s",
            "awsStsEndpoint", "http://127.0.0.1:" + sts.getAddress().getPort()};
        System.arraycopy(given, 0, options, 0, given.length);
        System.arraycopy(more, 0, options, given.length, more.length);
        StreamAccount.check(TestConfigs.config(options).options().producer());
    }

    @Test
    public void aStreamOfTheCallersAccountPasses() {
        check("arn:aws:kinesis:us-east-1:" + CALLER + ":stream/events");
        assertEquals(1, asked.get());
    }

    @Test
    public void aStreamOfAnotherAccountIsRefusedSayingWhyAndWhatToDo() {
        String message = assertThrows(IllegalArgumentException.class,
            () -> check("arn:aws:kinesis:us-east-1:222222222222:stream/events")).getMessage();
        for (String part : new String[] {"account 222222222222", "of account " + CALLER, "by name only",
                "Set awsRoleArn to a role in account 222222222222"}) {
            assertTrue(message, message.contains(part));
        }
    }

    @Test
    public void withARoleOfTheStreamsAccountStsIsNotAsked() {
        check("arn:aws:kinesis:us-east-1:222222222222:stream/events", "awsRoleArn", "arn:aws:iam::222222222222:role/w");
        assertEquals(0, asked.get());
    }
}
