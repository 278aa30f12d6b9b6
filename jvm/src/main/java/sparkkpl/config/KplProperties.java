package sparkkpl.config;

import java.lang.reflect.Method;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

/**
 * The KPL's own configuration properties, read off {@link KinesisProducerConfiguration}'s setters
 * so the accepted set can never drift from the KPL in the jar. Values are applied through those
 * setters, so the KPL's own range checks reject a bad value; the error names the property.
 */
public final class KplProperties {
    /** Set by the sink to match its own option {@code maxRecordBytes}; an error when given. */
    public static final String MAX_USER_RECORD_SIZE = "MaxUserRecordSize";

    /**
     * Refused: the KPL (1.0.9 and 1.1.1) hands its daemon the whole configuration on the command line (hex-encoded,
     * not hidden), where every local user reads it ({@code ps}, {@code /proc/<pid>/cmdline}), and
     * logs that command line at DEBUG.
     */
    public static final String PROXY_PASSWORD = "ProxyPassword";
    /** The region the KPL writes in, which a streamArn option decides. */
    static final String REGION = "Region";

    /** What a secret shows as wherever settings are logged or shown. */
    public static final String MASK = "***";

    private KplProperties() {}

    /** The canonical name ("RecordMaxBufferedTime") of a property given in any case, if it is one. */
    public static Optional<String> canonicalName(String name) {
        Method setter = KplValues.setter(name);
        return setter == null ? Optional.empty() : Optional.of(setter.getName().substring(3));
    }

    /** Every property a user may set, by canonical name, sorted. */
    public static Set<String> names() {
        Set<String> names = new java.util.TreeSet<>(allNames());
        names.remove(MAX_USER_RECORD_SIZE);
        names.remove(PROXY_PASSWORD);
        return names;
    }

    private static Set<String> allNames() {
        Set<String> names = new java.util.TreeSet<>();
        KplValues.setters().forEach(m -> names.add(m.getName().substring(3)));
        return names;
    }

    /** The KPL's default for a property, read from a fresh configuration; empty if it has no getter. */
    public static Optional<String> defaultValue(String canonicalName) {
        return read(new KinesisProducerConfiguration(), canonicalName);
    }

    /**
     * What a configuration holds for every property, by canonical name, secrets masked: the values
     * a producer really runs with, defaults and the sink's own settings included.
     */
    public static Map<String, String> readBack(KinesisProducerConfiguration config) {
        Map<String, String> values = new TreeMap<>();
        for (String name : allNames()) {
            read(config, name).ifPresent(value -> values.put(name, isSecret(name) && !value.isEmpty() ? MASK : value));
        }
        return values;
    }

    private static Optional<String> read(KinesisProducerConfiguration config, String canonicalName) {
        for (String prefix : new String[] {"get", "is"}) {
            try {
                Object value = KinesisProducerConfiguration.class.getMethod(prefix + canonicalName).invoke(config);
                return Optional.ofNullable(value).map(String::valueOf);
            } catch (NoSuchMethodException e) {
                // try the other getter prefix
            } catch (ReflectiveOperationException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** Whether a property holds a secret, so that it is never logged or shown. */
    public static boolean isSecret(String canonicalName) {
        return canonicalName.toLowerCase(Locale.ROOT).contains("password");
    }

    /**
     * The values of KPL properties given as text by canonical name, each parsed to its setter's type and
     * checked by the KPL's own setters: once, on the driver.
     *
     * @throws IllegalArgumentException naming the property, for a value of the wrong type or one
     *     the KPL rejects
     */
    public static KplValues parsed(Map<String, String> properties) {
        Map<String, Object> values = new TreeMap<>();
        properties.forEach((name, value) -> values.put(name, parsed(name, value)));
        KplValues parsed = new KplValues(values);
        parsed.configuration();
        return parsed;
    }

    private static Object parsed(String name, String value) {
        Method setter = KplValues.setter(name);
        if (setter == null) {
            throw new IllegalArgumentException("Unknown KPL property '" + name + "'");
        }
        try {
            return parse(setter.getParameterTypes()[0], value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("Invalid value for KPL property '" + name + "': " + e.getMessage(), e);
        }
    }

    private static Object parse(Class<?> type, String value) {
        String trimmed = value.trim();
        try {
            if (type == long.class) {
                return Long.parseLong(trimmed);
            }
            if (type == int.class) {
                return Integer.parseInt(trimmed);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected a whole number, got '" + trimmed + "'", e);
        }
        if (type == boolean.class) {
            if (!trimmed.equalsIgnoreCase("true") && !trimmed.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException("expected true or false, got '" + trimmed + "'");
            }
            return Boolean.parseBoolean(trimmed);
        }
        return value;
    }
}
