package sparkkpl.kinesis;

import static org.junit.Assert.assertEquals;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.Test;
import sparkkpl.kinesis.RowStreams.Placement;

/** A task's answer to how each stream places records: the driver's, else its JVM's, asked again when old. */
public class RowStreamsTest {
    private final AtomicLong clock = new AtomicLong(1_000);
    private final FakeLister lister = new FakeLister(clock::get);
    private final RowStreams streams = new RowStreams(
        Map.of("own", new StreamDescription("own", "t1", "AUTO", StreamDescription.DEFAULT_MAX_RECORD_KIB)),
        new ShardMaps(lister, clock::get), clock::get);

    @Test
    public void theWritesOwnStreamIsAsTheDriverDescribedIt() {
        assertEquals(Placement.BY_KINESIS, streams.placement("own"));
        assertEquals(0, lister.descriptions.get());
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
    public void aStreamThatCannotBeDescribedIsUnknownNotKeyed() {
        lister.describingRefused = true;
        assertEquals(Placement.UNKNOWN, streams.placement("named"));
        assertEquals(Placement.UNKNOWN, streams.placement("named"));
        assertEquals("asked once per maximum age", 1, lister.descriptions.get());
    }
}
