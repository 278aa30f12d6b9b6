package sparkkpl.config;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.junit.Test;

/** A group of a write's values is filled by its components' names, each the value of its option's kind. */
public class OptionGroupsTest {
    private static GivenOptions given(String... namesAndValues) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            options.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return GivenOptions.gather(Map.of(), options);
    }

    @Test
    public void eachComponentIsTheOptionOfItsNameGivenOrDefaulted() {
        assertEquals(new WriteOptions.Delivery(5, false, "/tmp/dead", false, Ordering.NONE), OptionGroups.read(
            WriteOptions.Delivery.class, given("ACKTIMEOUTMS", " 5", "failOnError", "false", "deadLetterPath", "/tmp/dead"),
            Map.of()));
        assertEquals(new WriteOptions.Delivery(600_000, true, null, false, Ordering.NONE),
            OptionGroups.read(WriteOptions.Delivery.class, given(), Map.of()));
    }

    @Test
    public void aValueTheSinkDerivesWinsOverTheOption() {
        assertEquals(new WriteOptions.Delivery(7, true, null, false, Ordering.NONE), OptionGroups.read(
            WriteOptions.Delivery.class, given("ackTimeoutMs", "5"), Map.of("ackTimeoutMs", 7L)));
    }

    /** A mistake in the sink, not the user's: the first write meets it, naming the component. */
    @Test
    public void aComponentNamingNoOptionNeedsADerivedValue() {
        assertEquals("Aggregating.aggregatesRecords names no option", assertThrows(IllegalStateException.class,
            () -> OptionGroups.read(WriteOptions.Aggregating.class, given(), Map.of())).getMessage());
    }
}
