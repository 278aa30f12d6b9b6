package sparkkpl.controlplane;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;
import sparkkpl.config.ProducerSpec;
import sparkkpl.config.WriteConfig;
import sparkkpl.kinesis.StreamDescription;

/**
 * The driver's descriptions of the streams rows name: one call per stream and look whatever the number
 * of executors asking, a later look confirmed by ListShards, and an answer that never waits for Kinesis.
 */
public class SharedDescriptionsTest {
    private static final ProducerSpec SPEC = WriteConfig.read(Map.of(),
        Map.of("Region", "us-east-1", "awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "secret")).options().producer();

    private final AtomicLong clock = new AtomicLong(1_000);
    /** Calls run when the test says, as a pool would run them later. */
    private final List<Runnable> queued = new ArrayList<>();
    private final FakeCalls calls = new FakeCalls();
    private final SharedDescriptions shared = new SharedDescriptions(calls, queued::add, clock::get);

    private static final class FakeCalls implements SharedDescriptions.Calls {
        final AtomicInteger describes = new AtomicInteger();
        final AtomicInteger checks = new AtomicInteger();
        String created = "100";
        boolean fails;

        @Override
        public StreamDescription describe(ProducerSpec spec, String stream) throws IOException {
            describes.incrementAndGet();
            if (fails) {
                throw new IOException("LimitExceededException: Rate exceeded for stream " + stream);
            }
            return new StreamDescription(stream, created, null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
        }

        @Override
        public boolean stillExists(ProducerSpec spec, String stream, String created) {
            checks.incrementAndGet();
            return created.equals(this.created);
        }
    }

    private SharedDescriptions.Answer ask(String stream, String look) {
        return shared.answer(new SharedDescriptions.Ask(SPEC, stream, look));
    }

    private void runCalls() {
        List<Runnable> now = new ArrayList<>(queued);
        queued.clear();
        now.forEach(Runnable::run);
    }

    private static StreamDescription described(SharedDescriptions.Answer answer) {
        assertTrue("described: " + answer, answer instanceof SharedDescriptions.Described);
        return ((SharedDescriptions.Described) answer).description();
    }

    @Test
    public void fiveHundredExecutorsAskingForSixStreamsMakeSixCalls() {
        for (int executor = 0; executor < 500; executor++) {
            for (int stream = 0; stream < 6; stream++) {
                assertTrue(ask("s" + stream, "look-1") instanceof SharedDescriptions.Pending);
            }
        }
        runCalls();
        for (int executor = 0; executor < 500; executor++) {
            for (int stream = 0; stream < 6; stream++) {
                assertEquals("s" + stream, described(ask("s" + stream, "look-1")).stream());
            }
        }

        assertEquals(6, calls.describes.get());
        assertEquals(0, calls.checks.get());
    }

    @Test
    public void aLaterLookConfirmsTheIncarnationWithListShardsInsteadOfDescribing() {
        ask("s", "look-1");
        runCalls();
        ask("s", "look-2");
        runCalls();

        assertEquals("100", described(ask("s", "look-2")).created());
        assertEquals(1, calls.describes.get());
        assertEquals(1, calls.checks.get());
    }

    @Test
    public void aStreamCreatedAgainIsDescribedAgain() {
        ask("s", "look-1");
        runCalls();
        calls.created = "200";
        ask("s", "look-2");
        runCalls();

        assertEquals("200", described(ask("s", "look-2")).created());
        assertEquals(2, calls.describes.get());
    }

    @Test
    public void aDescriptionAsOldAsTheKplTrustsItsOwnIsMadeAgain() {
        ask("s", "look-1");
        runCalls();
        clock.addAndGet(ShardMaps.DESCRIPTION_MAX_AGE_NANOS);
        ask("s", "look-2");
        runCalls();

        assertEquals(2, calls.describes.get());
        assertEquals("no ListShards for a description that old", 0, calls.checks.get());
    }

    @Test
    public void aFailureIsEveryonesForASecondThenAskedAgain() {
        calls.fails = true;
        ask("s", "look-1");
        runCalls();
        SharedDescriptions.Answer failed = ask("s", "look-1");
        assertTrue(failed.toString(), failed instanceof SharedDescriptions.Failed);
        assertTrue(((SharedDescriptions.Failed) failed).message().contains("LimitExceededException"));
        assertTrue(ask("s", "look-1") instanceof SharedDescriptions.Failed);

        calls.fails = false;
        clock.addAndGet(SharedDescriptions.FAILURE_KEPT_NANOS);
        assertTrue(ask("s", "look-1") instanceof SharedDescriptions.Pending);
        runCalls();
        described(ask("s", "look-1"));
        assertEquals(2, calls.describes.get());
    }

    @Test
    public void anAnswerNeverWaitsForACallUnderWay() {
        ask("slow", "look-1");  // queued, never run: Kinesis has not answered
        long started = System.nanoTime();
        for (int i = 0; i < 1_000; i++) {
            assertTrue(ask("slow", "look-1") instanceof SharedDescriptions.Pending);
            assertTrue(ask("slow", "look-2") instanceof SharedDescriptions.Pending);
        }
        assertTrue("answered at once", System.nanoTime() - started < 1_000_000_000L);
        assertEquals("one call under way at a time per stream", 1, queued.size());
    }

    @Test
    public void streamsNoExecutorAskedForLatelyAreForgotten() {
        for (int i = 0; i < 10_000; i++) {
            ask("name-" + i, "look-1");
        }
        runCalls();
        clock.addAndGet(SharedDescriptions.FORGOTTEN_AFTER_NANOS);
        ask("new", "look-2");

        assertEquals("flat memory over a query meeting 10,000 names", 1, shared.size());
    }

    @Test
    public void anExecutorWaitsForTheAnswerAndFailsWithTheDriversMessage() throws Exception {
        AtomicInteger asks = new AtomicInteger();
        SharedDescriptions.Ask ask = new SharedDescriptions.Ask(SPEC, "s", "l");
        StreamDescription answer = DescriptionsFromDriver.asked(message -> {
            assertEquals("the driver reads the ask", ask, SharedDescriptions.decoded(message, SharedDescriptions.Ask.class));
            return SharedDescriptions.encoded(asks.incrementAndGet() < 3 ? new SharedDescriptions.Pending()
                : new SharedDescriptions.Described(new StreamDescription("s", "1", null, 1024)));
        }, ask, System::currentTimeMillis);
        assertEquals("s", answer.stream());
        assertEquals(3, asks.get());

        IOException failed = assertThrows(IOException.class, () -> DescriptionsFromDriver.asked(
            message -> SharedDescriptions.encoded(new SharedDescriptions.Failed("AccessDeniedException: no")), ask,
            System::currentTimeMillis));
        assertTrue(failed.getMessage(), failed.getMessage().contains("stream 's'") && failed.getMessage().contains("AccessDenied"));

        assertThrows(DescriptionsFromDriver.Unreachable.class, () -> DescriptionsFromDriver.asked(message -> {
            throw new IllegalStateException("no driver plugin");
        }, ask, System::currentTimeMillis));
    }

    @Test
    public void messagesCrossSparksRpcAsBytesOnly() {
        Object message = SharedDescriptions.encoded(new SharedDescriptions.Ask(SPEC, "s", "l"));

        assertEquals("a type Spark's own class loader has: an executor cannot decode the sink's classes",
            byte[].class, message.getClass());
    }
}
