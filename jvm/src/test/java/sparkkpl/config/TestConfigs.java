package sparkkpl.config;

import java.util.HashMap;
import java.util.Map;

/** A write's values from option names and values, as a test states them (in us-east-1). */
public final class TestConfigs {
    private TestConfigs() {}

    public static WriteConfig config(String... namesAndValues) {
        Map<String, String> options = new HashMap<>(Map.of("Region", "us-east-1"));
        for (int i = 0; i < namesAndValues.length; i += 2) {
            options.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return WriteConfig.read(Map.of(), options);
    }

    public static WriteOptions read(String... namesAndValues) {
        return config(namesAndValues).options();
    }

    public static ProducerSpec producer(String... namesAndValues) {
        return read(namesAndValues).producer();
    }
}
