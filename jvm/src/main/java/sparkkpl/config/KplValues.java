package sparkkpl.config;

import java.io.Serializable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

/**
 * The KPL properties of a write as the driver parsed them ({@link KplProperties#parsed}): each a long,
 * an int, a boolean or a string, by canonical name. The KPL's configuration object is not serializable,
 * so tasks get these values and hand them to its setters; nothing in a task parses a property's text.
 */
public final class KplValues implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Setters that take objects, or that belong to Glue Schema Registry, which the jar leaves out. */
    private static final Set<String> NOT_PASSED_THROUGH = Set.of(
        "CredentialsProvider", "MetricsCredentialsProvider", "GlueSchemaRegistryConfiguration",
        "GlueSchemaRegistryPropertiesFilePath", "GlueSchemaRegistryCredentialsProvider");
    /** Lower-cased name to setter; the setter's own name gives the canonical spelling. */
    private static final Map<String, Method> SETTERS = findSetters();

    /** Canonical name to a Long, Integer, Boolean or String, of the setter's type. */
    private final TreeMap<String, Object> values;

    KplValues(Map<String, Object> values) {
        this.values = new TreeMap<>(values);
    }

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

    /** The setter of a property given in any case, or null when the KPL has no such property to pass through. */
    static Method setter(String name) {
        return SETTERS.get(name.toLowerCase(Locale.ROOT));
    }

    /** The setters of every property that may be passed through. */
    static Iterable<Method> setters() {
        return SETTERS.values();
    }

    /** A fresh KPL configuration with these values set through the KPL's setters. */
    public KinesisProducerConfiguration configuration() {
        KinesisProducerConfiguration config = new KinesisProducerConfiguration();
        values.forEach((name, value) -> apply(config, name, value));
        return config;
    }

    private static void apply(KinesisProducerConfiguration config, String name, Object value) {
        try {
            setter(name).invoke(config, value);
        } catch (InvocationTargetException e) {
            // The KPL's own range check: the driver met it first, when it parsed the values.
            throw new IllegalArgumentException(
                "Invalid value for KPL property '" + name + "': " + e.getCause().getMessage(), e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** These values with some set by the sink, each of its setter's type. */
    KplValues with(Map<String, Object> derived) {
        TreeMap<String, Object> all = new TreeMap<>(values);
        all.putAll(derived);
        return new KplValues(all);
    }

    /** Whether the write set this property (by canonical name). */
    public boolean isSet(String name) {
        return values.containsKey(name);
    }

    /** The canonical names of the properties the write set. */
    public Set<String> names() {
        return Collections.unmodifiableSet(values.keySet());
    }

    /** The values as text, by canonical name (secrets included: never log them). */
    public Map<String, String> asText() {
        Map<String, String> text = new TreeMap<>();
        values.forEach((name, value) -> text.put(name, String.valueOf(value)));
        return Collections.unmodifiableMap(text);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof KplValues kpl && values.equals(kpl.values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }
}
