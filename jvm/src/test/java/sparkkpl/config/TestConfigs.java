package sparkkpl.config;

import java.util.HashMap;
import java.util.Map;

/** A write's config from option names and values, as a test states them. */
public final class TestConfigs {
    private TestConfigs() {}

    public static WriteConfig resolve(String... namesAndValues) {
        Map<String, String> options = new HashMap<>(Map.of("Region", "us-east-1"));
        for (int i = 0; i < namesAndValues.length; i += 2) {
            options.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return WriteConfig.resolve(Map.of(), options);
    }
}
