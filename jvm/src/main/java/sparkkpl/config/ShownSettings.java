package sparkkpl.config;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * A write's settings as logs, the Spark UI, reports and users' checks see them: by config key, secrets
 * masked.
 */
final class ShownSettings {
    /** The sink options that shape the producer itself, so take part in its identity. */
    private static final SinkOption[] PRODUCER_OPTIONS = {SinkOption.QUEUE_LIMIT, SinkOption.QUEUE_LIMIT_BYTES,
        SinkOption.NATIVE_DIR, SinkOption.PRODUCER_IDLE_TIMEOUT_MS, SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS,
        SinkOption.AWS_ACCESS_KEY_ID, SinkOption.AWS_SECRET_ACCESS_KEY, SinkOption.AWS_SESSION_TOKEN,
        SinkOption.AWS_PROFILE, SinkOption.AWS_ROLE_ARN, SinkOption.AWS_ROLE_SESSION_NAME,
        SinkOption.AWS_STS_ENDPOINT};

    private ShownSettings() {}

    /** The sink options that shape a producer, by config key, secrets masked. */
    static Map<String, String> producerOptions(GivenOptions given) {
        Map<String, String> shown = new TreeMap<>();
        for (SinkOption option : PRODUCER_OPTIONS) {
            String value = given.value(option);
            if (value != null) {
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
            String value = given.value(option);
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
