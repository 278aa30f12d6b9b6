package sparkkpl.producer;

import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import org.junit.Test;
import sparkkpl.kinesis.StreamDescription;

/** What the JVM knows of streams created again, for the tasks still on an earlier incarnation. */
public class NewestIncarnationsTest {
    private final NewestIncarnations newest = new NewestIncarnations();

    @Test
    public void aTaskOnAnEarlierIncarnationIsOvertakenOnceALaterOneWasMet() {
        assertFalse(newest.overtaken(incarnation("s", "1700000000")));
        assertFalse("the same incarnation again", newest.overtaken(incarnation("s", "1700000000")));
        assertFalse("a later one", newest.overtaken(incarnation("s", "1700000010")));
        assertTrue(newest.overtaken(incarnation("s", "1700000000")));
        assertFalse("no creation time: nothing to compare", newest.overtaken(incarnation("s", null)));
    }

    /** A long query meeting 10,000 stream names keeps flat memory. */
    @Test
    public void itRemembersABoundedNumberOfStreamNames() {
        for (int name = 0; name < 10_000; name++) {
            newest.overtaken(incarnation("stream-" + name, "1700000000"));
        }
        assertTrue(newest.size() + " names", newest.size() <= NewestIncarnations.CAPACITY);
    }

    private static StreamDescription incarnation(String stream, String created) {
        return new StreamDescription(stream, created, null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
    }
}
