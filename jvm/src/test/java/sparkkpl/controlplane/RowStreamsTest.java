package sparkkpl.controlplane;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Before;
import org.junit.Test;
import sparkkpl.controlplane.RowStreams.Placement;
import sparkkpl.kinesis.StreamDescription;

/**
 * A task's answer to how each stream places records, and which incarnation of it the task writes to:
 * the driver's, else its JVM's for the driver's look, asked again when old.
 */
public class RowStreamsTest {
    private static final StreamDescription OWN =
        new StreamDescription("own", "1700000000", "AUTO", StreamDescription.DEFAULT_MAX_RECORD_KIB);
    private final AtomicLong clock = new AtomicLong(1_000);
    private final FakeLister lister = new FakeLister(clock::get);
    private final RowStreams streams = new RowStreams(Map.of("own", OWN), "look", clock::get);

    @Before
    public void onTheProducersMaps() {
        streams.use(new ShardMaps(lister, clock::get));
    }

    @Test
    public void theWritesOwnStreamIsAsTheDriverDescribedIt() {
        assertEquals(Placement.BY_KINESIS, streams.placement("own"));
        assertEquals("1700000000", streams.created("own"));
        assertEquals(0, lister.descriptions.get());
        assertEquals(Set.of(), streams.met());
    }

    @Test
    public void aStreamOnlyRowsNameIsDescribedOncePerMaximumAge() {
        lister.distributions.put("named", "AUTO");
        assertEquals(Placement.BY_KINESIS, streams.placement("named"));
        assertEquals(Placement.BY_KEY, streams.placement("keyed"));
        lister.distributions.put("named", "USER_PARTITION_KEY");
        clock.addAndGet(ShardMaps.DESCRIPTION_MAX_AGE_NANOS - 1);
        assertEquals(Placement.BY_KINESIS, streams.placement("named"));
        assertEquals(2, lister.descriptions.get());

        clock.addAndGet(1);
        assertEquals("switched back to keys, seen once the answer is old", Placement.BY_KEY, streams.placement("named"));
        assertEquals(3, lister.descriptions.get());
    }

    @Test
    public void aStreamOnlyRowsNameIsMetOnceWithItsIncarnationForTheProducerAndTheCommit() {
        lister.created.put("named", "1700000000");
        assertNull(streams.created("named"));
        streams.placement("named");
        assertEquals("1700000000", streams.created("named"));
        StreamDescription met = streams.newlyMet();
        assertEquals("1700000000", met.created());
        streams.placement("named");
        assertNull("told once", streams.newlyMet());

        lister.created.put("named", "1700000100"); // created again; seen once the answer is old
        clock.addAndGet(ShardMaps.DESCRIPTION_MAX_AGE_NANOS);
        streams.placement("named");
        assertEquals("1700000100", streams.newlyMet().created());
        assertEquals("both, for the driver to fail the write at its commit", List.of("1700000000", "1700000100"),
            streams.met().stream().map(StreamDescription::created).toList());
        assertEquals(Set.of(OWN, met), Set.copyOf(List.copyOf(streams.known()).subList(0, 2)));
    }

    @Test
    public void aStreamThatCannotBeDescribedIsUnknownNotKeyed() {
        lister.describingRefused = true;
        assertEquals(Placement.UNKNOWN, streams.placement("named"));
        assertEquals(Placement.UNKNOWN, streams.placement("named"));
        assertEquals("asked once per maximum age", 1, lister.descriptions.get());
        assertNull(streams.created("named"));
        assertNull(streams.newlyMet());
    }

    /** Where the KPL aggregates, the refusal of such a stream's rows says which stream, why, and what to grant. */
    @Test
    public void theRefusalOfAStreamThatCannotBeDescribedNamesItAndItsFailure() {
        lister.describingRefused = true;
        streams.placement("named");

        String refusal = streams.refusedToKplAggregation("named").getMessage();

        assertTrue(refusal, refusal.startsWith("Rows name stream 'named', which could not be described ("));
        assertTrue(refusal, refusal.contains("not authorized to perform kinesis:DescribeStreamSummary): with the KPL's "
            + "own aggregation (aggregation=kpl)"));
        assertTrue(refusal, refusal.endsWith("Grant kinesis:DescribeStreamSummary on the stream, or write it "
            + "unaggregated (AggregationEnabled=false) or with aggregation=executor"));
    }
}
