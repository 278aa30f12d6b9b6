package sparkkpl.records;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.Test;

/** Record ids that name a record by its content, so that a retry seeing its rows in another order agrees. */
public class RecordIdHeaderTest {
    private static final RecordIdHeader HEADER = new RecordIdHeader("0d7f5ad0-3ad5-4b4b-9d0f-2a8a4c0ff0a1");

    @Test
    public void theSameRowsInAnotherOrderGetTheSameIds() {
        List<String> rows = List.of("a", "b", "a", "c", "a", "b");
        List<String> reordered = new ArrayList<>(rows);
        java.util.Collections.reverse(reordered);

        Set<String> firstAttempt = ids(rows);
        Set<String> retry = ids(reordered);

        assertEquals("every record, identical ones too, has an id of its own", rows.size(), firstAttempt.size());
        assertEquals(firstAttempt, retry);
    }

    @Test
    public void keysAndStreamTakePartInTheDigestUnambiguously() {
        RecordIdHeader.Task task = HEADER.forTask(0, 0);
        byte[] data = "x".getBytes(StandardCharsets.UTF_8);
        byte[] one = Arrays.copyOfRange(task.prefix("ab", "c", null, data), 32, 44);
        byte[] other = Arrays.copyOfRange(task.prefix("a", "bc", null, data), 32, 44);
        assertNotEquals(ByteBuffer.wrap(one), ByteBuffer.wrap(other));
    }

    @Test
    public void layout() {
        byte[] prefixed = HEADER.forTask(7, 3).prefix("s", "k", null, "data".getBytes(StandardCharsets.UTF_8));
        ByteBuffer header = ByteBuffer.wrap(prefixed);
        byte[] magic = new byte[4];
        header.get(magic);
        assertArrayEquals(new byte[] {'S', 'K', 'R', 2}, magic);
        assertEquals(0x0d7f5ad03ad54b4bL, header.getLong());
        assertEquals(0x9d0f2a8a4c0ff0a1L, header.getLong());
        assertEquals(7, header.getLong());
        assertEquals(3, header.getInt());
        header.position(44);
        assertEquals("first of its kind", 0, header.getInt());
        assertEquals("data", new String(prefixed, RecordIdHeader.SIZE, 4, StandardCharsets.UTF_8));
    }

    /** Python reads headers by the declared fields (through sink_facts.json), so they must be what prefix writes. */
    @Test
    public void theDeclaredFieldsAreWherePrefixWritesThem() {
        ByteBuffer header = ByteBuffer.wrap(HEADER.forTask(7, 3).prefix("s", "k", null, new byte[0]));
        Map<RecordIdHeader.Field, Long> numbers = new EnumMap<>(RecordIdHeader.Field.class);
        for (RecordIdHeader.Field field : RecordIdHeader.Field.values()) {
            if (field.number) {
                numbers.put(field, field.bytes == Long.BYTES ? header.getLong() : header.getInt());
            } else {
                header.position(header.position() + field.bytes);
            }
        }
        assertEquals(Map.of(RecordIdHeader.Field.BATCH_ID, 7L, RecordIdHeader.Field.PARTITION, 3L,
            RecordIdHeader.Field.OCCURRENCE, 0L), numbers);
        assertEquals(RecordIdHeader.SIZE, header.position());
    }

    @Test
    public void occurrencesCountEachDigestThroughGrowth() {
        DigestOccurrences occurrences = new DigestOccurrences();
        for (long digest = -5_000; digest < 5_000; digest++) {
            assertEquals(0, occurrences.next(digest));
        }
        assertEquals(1, occurrences.next(0));
        assertEquals(1, occurrences.next(4_999));
        assertEquals(2, occurrences.next(4_999));
    }

    private static Set<String> ids(List<String> rows) {
        RecordIdHeader.Task task = HEADER.forTask(0, 1);
        Set<String> ids = new HashSet<>();
        for (String row : rows) {
            byte[] prefixed = task.prefix("s", "key-" + row, null, row.getBytes(StandardCharsets.UTF_8));
            ids.add(row + ":" + Arrays.toString(Arrays.copyOfRange(prefixed, 0, RecordIdHeader.SIZE)));
        }
        return ids;
    }
}
