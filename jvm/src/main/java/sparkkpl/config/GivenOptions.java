package sparkkpl.config;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The option grammar: a write's strings as given ({@code spark.kpl.*} config keys overlaid by the
 * DataFrame's options), sorted into sink options and KPL properties by name, and each sink option read in
 * its form (a whole number above 0, true or false, one of a choice's values), the error naming the option
 * and its config key.
 */
final class GivenOptions {
    /** The options given, as options or config keys. */
    private final EnumMap<SinkOption, String> sinkOptions;
    /** The KPL properties given, by canonical name. */
    private final TreeMap<String, String> kpl;
    /** Each choice option's value given or defaulted, once {@link #parseChoices} read them. */
    private final EnumMap<SinkOption, Enum<?>> choices = new EnumMap<>(SinkOption.class);

    private GivenOptions(EnumMap<SinkOption, String> sinkOptions, TreeMap<String, String> kpl) {
        this.sinkOptions = sinkOptions;
        this.kpl = kpl;
    }

    /**
     * @param sparkConf the session's configuration (only {@code spark.kpl.*} keys are read)
     * @param options the write's options, any case; they win over config keys
     * @throws IllegalArgumentException naming the first unknown option or key
     */
    static GivenOptions gather(Map<String, String> sparkConf, Map<String, String> options) {
        EnumMap<SinkOption, String> sink = new EnumMap<>(SinkOption.class);
        TreeMap<String, String> kpl = new TreeMap<>();
        sparkConf.forEach((key, value) -> {
            if (key.startsWith(SinkOption.CONF_PREFIX)) {
                String name = key.substring(SinkOption.CONF_PREFIX.length());
                SinkOption.byName(name).filter(option -> !option.isConfigKey()).ifPresent(option -> {
                    throw new IllegalArgumentException("Spark config key '" + key + "' is not taken: '"
                        + option.optionName() + "' belongs to one query, so it is an option only (writeStream's "
                        + "own option, or .queryName for the name)");
                });
                put(sink, kpl, name, value, "Spark config key '" + key + "'");
            }
        });
        options.forEach((key, value) -> put(sink, kpl, key, value, "option '" + key + "'"));
        return new GivenOptions(sink, kpl);
    }

    private static void put(EnumMap<SinkOption, String> sink, TreeMap<String, String> kpl,
                            String name, String value, String source) {
        Optional<SinkOption> option = SinkOption.byName(name);
        if (option.isPresent()) {
            sink.put(option.get(), value);
            return;
        }
        Optional<String> property = KplProperties.canonicalName(name);
        if (property.isEmpty()) {
            throw new IllegalArgumentException("Unknown " + source + " for the kpl sink. It takes the sink "
                + "options " + userOptionNames() + " and the KPL's own properties "
                + KplProperties.names() + ", in any case, as options or as spark.kpl.<name> config keys.");
        }
        kpl.put(property.get(), value);
    }

    private static String userOptionNames() {
        StringBuilder names = new StringBuilder("[");
        for (SinkOption option : SinkOption.values()) {
            if (!option.isInternal()) {
                names.append(names.length() > 1 ? ", " : "").append(option.optionName());
            }
        }
        return names.append(']').toString();
    }

    /** These options with one of them set, as if given. */
    GivenOptions with(SinkOption option, String value) {
        EnumMap<SinkOption, String> sink = new EnumMap<>(sinkOptions);
        sink.put(option, value);
        return new GivenOptions(sink, kpl);
    }

    /** The KPL properties given, by canonical name. */
    TreeMap<String, String> kpl() {
        return new TreeMap<>(kpl);
    }

    boolean givenKpl(String property) {
        return kpl.containsKey(property);
    }

    /** The value given for an option, else its default, else null. */
    String value(SinkOption option) {
        String value = sinkOptions.get(option);
        return value != null ? value : option.defaultValue().orElse(null);
    }

    /** Whether the option was given (as an option or config key), as opposed to defaulted. */
    boolean given(SinkOption option) {
        return sinkOptions.containsKey(option);
    }

    boolean bool(SinkOption option) {
        String value = value(option).trim();
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw invalid(option, "true or false", value);
        }
        return Boolean.parseBoolean(value);
    }

    long positiveLong(SinkOption option) {
        String value = value(option);
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed > 0) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw invalid(option, "a whole number above 0", value);
    }

    /** Reads every choice option given or defaulted. */
    void parseChoices() {
        for (SinkOption option : SinkOption.values()) {
            if (option.choiceType() != null && value(option) != null) {
                choices.put(option, parseChoice(option));
            }
        }
    }

    /** @throws IllegalArgumentException naming the option, its config key and its choices */
    private Enum<?> parseChoice(SinkOption option) {
        String given = value(option);
        String wanted = given.trim().toLowerCase(Locale.ROOT);
        for (Enum<?> choice : option.choiceType().getEnumConstants()) {
            if (SinkOption.written(choice).equals(wanted)) {
                return choice;
            }
        }
        throw invalid(option, "one of " + String.join(", ", option.choices()), given);
    }

    /** The choice given or defaulted; null for an option with neither (partitioner). */
    <E extends Enum<E>> E choice(SinkOption option, Class<E> type) {
        return type.cast(choices.get(option));
    }

    static IllegalArgumentException invalid(SinkOption option, String expected, String value) {
        return new IllegalArgumentException("Invalid value for option '" + option.optionName() + "' ("
            + option.confKey() + "): expected " + expected + ", got '" + value + "'");
    }
}
