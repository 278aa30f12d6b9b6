package sparkkpl.config;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collections;
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
    /** Setters that take objects, or that belong to Glue Schema Registry, which the jar leaves out. */
    private static final Set<String> NOT_PASSED_THROUGH = Set.of(
        "CredentialsProvider", "MetricsCredentialsProvider", "GlueSchemaRegistryConfiguration",
        "GlueSchemaRegistryPropertiesFilePath", "GlueSchemaRegistryCredentialsProvider");

    /** Set by the sink to match its own option {@code maxRecordBytes}; an error when given. */
    public static final String MAX_USER_RECORD_SIZE = "MaxUserRecordSize";

    /**
     * Refused: the KPL (1.0.9 and 1.1.1) hands its daemon the whole configuration on the command line (hex-encoded,
     * not hidden), where every local user reads it ({@code ps}, {@code /proc/<pid>/cmdline}), and
     * logs that command line at DEBUG.
     */
    public static final String PROXY_PASSWORD = "ProxyPassword";

    /** Lower-cased name to setter; the setter's own name gives the canonical spelling. */
    private static final Map<String, Method> SETTERS = findSetters();

    /** What a secret shows as wherever settings are logged or shown. */
    public static final String MASK = "***";

    private KplProperties() {}

    private static Map<String, Method> findSetters() {
        Map<String, Method> setters = new TreeMap<>();
        for (Method method : KinesisProducerConfiguration.class.getMethods()) {
            String name = method.getName();
            boolean isSetter = name.startsWith("set") && method.getParameterCount() == 1
                && !Modifier.isStatic(method.getModifiers());
            if (!isSetter || NOT_PASSED_THROUGH.contains(name.substring(3))) {
                continue;
            }
            Class<?> type = method.getParameterTypes()[0];
            boolean simple = type == String.class || type == long.class || type == int.class
                || type == boolean.class;
            // ThreadingModel has an enum overload too; the String one is the one users can name.
            if (simple) {
                setters.put(name.substring(3).toLowerCase(Locale.ROOT), method);
            }
        }
        return Collections.unmodifiableMap(setters);
    }

    /** The canonical name ("RecordMaxBufferedTime") of a property given in any case, if it is one. */
    public static Optional<String> canonicalName(String name) {
        Method setter = SETTERS.get(name.toLowerCase(Locale.ROOT));
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
        SETTERS.values().forEach(m -> names.add(m.getName().substring(3)));
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
     * Builds a KPL configuration from canonical name to value.
     *
     * @throws IllegalArgumentException naming the property, for a value of the wrong type or one
     *     the KPL rejects
     */
    public static KinesisProducerConfiguration toConfiguration(Map<String, String> properties) {
        KinesisProducerConfiguration config = new KinesisProducerConfiguration();
        properties.forEach((name, value) -> apply(config, name, value));
        return config;
    }

    private static void apply(KinesisProducerConfiguration config, String name, String value) {
        Method setter = SETTERS.get(name.toLowerCase(Locale.ROOT));
        if (setter == null) {
            throw new IllegalArgumentException("Unknown KPL property '" + name + "'");
        }
        try {
            setter.invoke(config, parse(setter.getParameterTypes()[0], value));
        } catch (IllegalArgumentException e) {
            throw invalid(name, e);
        } catch (InvocationTargetException e) {
            throw invalid(name, e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static IllegalArgumentException invalid(String name, Throwable cause) {
        return new IllegalArgumentException(
            "Invalid value for KPL property '" + name + "': " + cause.getMessage(), cause);
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
