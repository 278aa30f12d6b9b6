package sparkkpl.producer;

import java.util.LinkedHashMap;
import java.util.Map;
import sparkkpl.kinesis.StreamDescription;

/**
 * The latest incarnation (creation time) of each stream that the JVM's tasks have met, for the last
 * {@link #CAPACITY} stream names met. A task still on an earlier incarnation must not teach it to a
 * producer: that producer would be pushed out by the next task on the later one, and the two could
 * replace producers in turn for as long as both kinds of task come ({@link ProducerRegistry#acquire}).
 */
final class NewestIncarnations {
    /** Enough for the streams a JVM writes to at once; a name forgotten only risks one more replaced producer. */
    static final int CAPACITY = 1_024;
    private final Map<String, String> newest = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
            return size() > CAPACITY;
        }
    };

    /**
     * Notes the task's incarnation of the stream and says whether a later one is known: the task's write was
     * overtaken by the stream's re-creation (it fails at its commit).
     */
    synchronized boolean overtaken(StreamDescription stream) {
        if (stream.created() == null) {
            return false;
        }
        String known = newest.get(stream.stream());
        if (known != null && !known.equals(stream.created()) && StreamDescription.createdLater(known, stream.created())) {
            return true;
        }
        newest.put(stream.stream(), stream.created());
        return false;
    }

    synchronized int size() {
        return newest.size();
    }
}
