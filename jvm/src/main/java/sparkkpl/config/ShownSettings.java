package sparkkpl.config;

import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A write's settings as logs, the Spark UI, reports and users' checks see them: by config key, secrets
 * masked.
 */
final class ShownSettings {
    /** The names of the producer's options, which take part in its identity, besides the credentials. */
    private static final Set<String> PRODUCER_OPTIONS = Arrays.stream(ProducerSpec.Options.class.getRecordComponents())
        .map(RecordComponent::getName).collect(Collectors.toSet());

    private ShownSettings() {}

    /** The sink options that shape a producer, by config key, secrets masked. */
    static Map<String, String> producerOptions(GivenOptions given) {
        Map<String, String> shown = new TreeMap<>();
        for (SinkOption option : SinkOption.values()) {
            String value = given.text(option);
            boolean shapesProducer = PRODUCER_OPTIONS.contains(option.optionName())
                || CredentialOptions.OPTIONS.contains(option);
            if (shapesProducer && value != null) {
                shown.put(option.confKey(), shown(option, value));
            }
        }
        return shown;
    }

    /**
     * What this write runs with, by config key: every sink option (given or default) and every KPL
     * property given or set by the sink. Secrets are masked: this reaches logs, the Spark UI and users' checks.
     */
    static Map<String, String> settings(GivenOptions given, Map<String, String> kpl) {
        Map<String, String> settings = new TreeMap<>();
        for (SinkOption option : SinkOption.values()) {
            String value = given.text(option);
            if (!option.isInternal() && value != null) {
                settings.put(option.confKey(), shown(option, value));
            }
        }
        kpl.forEach((name, value) ->
            settings.put(SinkOption.CONF_PREFIX + name, KplProperties.isSecret(name) ? KplProperties.MASK : value));
        return Collections.unmodifiableMap(settings);
    }

    private static String shown(SinkOption option, String value) {
        return option.isSecret() ? KplProperties.MASK : value;
    }
}
