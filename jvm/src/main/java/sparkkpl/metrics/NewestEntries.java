package sparkkpl.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A synchronized map of what a driver keeps per write until it is read, whose oldest entries go past a bound. */
final class NewestEntries {
    private NewestEntries() {}

    static <K, V> Map<K, V> upTo(int max) {
        return Collections.synchronizedMap(new LinkedHashMap<>() {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > max;
            }
        });
    }
}
