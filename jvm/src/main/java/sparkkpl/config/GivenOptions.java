package sparkkpl.config;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The option grammar: a write's strings as given ({@code spark.kpl.*} config keys overlaid by the
 * DataFrame's options), sorted into sink options and KPL properties by name, and each sink option given or
 * defaulted read once, as its declaration's kind says ({@link SinkOption#read}).
 */
final class GivenOptions {
    /**
     * Spark's option for {@code save(path)} and {@code start(path)}: to this sink a stream's name, as a path
     * names delta's table, so that {@code save("clicks")} writes to the stream {@code clicks}.
     */
    static final String PATH = "path";

    /** The options given, as options or config keys. */
    private final EnumMap<SinkOption, String> sinkOptions;
    /** The KPL properties given, by canonical name. */
    private final TreeMap<String, String> kpl;
    /** Each option given or defaulted, read into its kind's type. */
    private final EnumMap<SinkOption, Object> values = new EnumMap<>(SinkOption.class);

    /** @throws IllegalArgumentException naming the first option whose text is not of its kind */
    private GivenOptions(EnumMap<SinkOption, String> sinkOptions, TreeMap<String, String> kpl) {
        this.sinkOptions = sinkOptions;
        this.kpl = kpl;
        for (SinkOption option : SinkOption.values()) {
            String text = text(option);
            if (text != null) {
                values.put(option, option.read(text));
            }
        }
    }

    /**
     * @param sparkConf the session's configuration (only {@code spark.kpl.*} keys are read)
     * @param options the write's options, any case; they win over config keys
     * @throws IllegalArgumentException naming the first unknown option or key, refused KPL property or bad value
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
                put(sink, kpl, name, value, true);
            }
        });
        pathAsStreamName(options).forEach((key, value) -> put(sink, kpl, key, value, false));
        OptionRules.refuseSinkOwnedKplProperties(kpl);
        OptionRules.implyAggregation(sink, kpl);
        OptionRules.applyStreamArn(sink, kpl);
        return new GivenOptions(sink, kpl);
    }

    /**
     * The write's options with a path ({@code save("clicks")}) given as the option streamName.
     *
     * @throws IllegalArgumentException when the option streamName names another stream
     */
    private static Map<String, String> pathAsStreamName(Map<String, String> options) {
        Optional<String> path = options.entrySet().stream().filter(entry -> entry.getKey().equalsIgnoreCase(PATH))
            .map(Map.Entry::getValue).findFirst();
        if (path.isEmpty()) {
            return options;
        }
        Map<String, String> named = new java.util.HashMap<>();
        options.forEach((key, value) -> {
            if (key.equalsIgnoreCase(PATH)) {
                return;
            }
            if (SinkOption.byName(key).orElse(null) == SinkOption.STREAM_NAME && !value.equals(path.get())) {
                throw new IllegalArgumentException("The kpl sink was given two streams: '" + path.get()
                    + "' as the path of save(path) or start(path), and '" + value + "' as the option '" + key
                    + "'. Name the stream once, as the path or as the option");
            }
            named.put(key, value);
        });
        named.put(SinkOption.STREAM_NAME.optionName(), path.get());
        return named;
    }

    /** @param asConfigKey whether the name comes from a config key (less its prefix), else it is an option's */
    private static void put(EnumMap<SinkOption, String> sink, TreeMap<String, String> kpl,
                            String name, String value, boolean asConfigKey) {
        Optional<SinkOption> option = SinkOption.byName(name);
        if (option.isPresent()) {
            sink.put(option.get(), value);
            return;
        }
        Optional<String> property = KplProperties.canonicalName(name);
        if (property.isEmpty()) {
            String prefix = asConfigKey ? SinkOption.CONF_PREFIX : "";
            String source = asConfigKey ? "Spark config key '" + prefix + name + "'" : "option '" + name + "'";
            throw new IllegalArgumentException("Unknown " + source + " for the kpl sink."
                + ClosestNames.didYouMean(prefix + name, knownNames(prefix, asConfigKey)) + " It takes the sink "
                + "options " + userOptionNames() + " and the KPL's own properties "
                + KplProperties.names() + ", in any case, as options or as spark.kpl.<name> config keys.");
        }
        kpl.put(property.get(), value);
    }

    /** The names a user may give, as an option or else as a config key: what a mistyped name is compared with. */
    private static List<String> knownNames(String prefix, boolean asConfigKey) {
        List<String> names = new ArrayList<>();
        for (SinkOption option : SinkOption.values()) {
            if (asConfigKey ? option.isConfigKey() : !option.isInternal()) {
                names.add(prefix + option.optionName());
            }
        }
        KplProperties.names().forEach(property -> names.add(prefix + property));
        return names;
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

    /** The KPL properties given, by canonical name. */
    TreeMap<String, String> kpl() {
        return new TreeMap<>(kpl);
    }

    boolean givenKpl(String property) {
        return kpl.containsKey(property);
    }

    /**
     * The one accessor of an option's value, of the type its kind reads into (String, Long, Boolean or its
     * choice's enum); null for an option neither given nor defaulted.
     */
    @SuppressWarnings("unchecked")
    <T> T get(SinkOption option) {
        return (T) values.get(option);
    }

    /** The text given for an option, else its default, else null: as shown, never read from. */
    String text(SinkOption option) {
        String value = sinkOptions.get(option);
        return value != null ? value : option.defaultValue().orElse(null);
    }

    /** Whether the option was given (as an option or config key), as opposed to defaulted. */
    boolean given(SinkOption option) {
        return sinkOptions.containsKey(option);
    }
}
