package sparkkpl.config;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import sparkkpl.aggregation.AggregateBuilder;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import software.amazon.kinesis.producer.KinesisProducerConfiguration.RecordDistributionStrategyDefault;
import sparkkpl.kinesis.RecordRules;

/**
 * The driver's one step from a write's strings to its values: {@code spark.kpl.*} config keys overlaid by
 * the DataFrame's options, each parsed and checked once here (so a mistake fails before any task
 * starts) into the {@link WriteOptions} and {@link ProducerSpec} that the executors receive.
 */
public final class WriteConfig {
    /** KinesisProducerConfiguration.setMaxUserRecordSize accepts up to 10 MiB (KPL 1.0.6+). */
    public static final long KPL_MAX_RECORD_BYTES = 10L << 20;
    /** ... and no less than 64 bytes. */
    private static final long KPL_MIN_RECORD_BYTES = 64;
    /** Kinesis takes 10 MiB per PutRecords call, partition keys included, and refuses a larger call whole. */
    private static final long KINESIS_MAX_CALL_BYTES = 10L << 20;
    private static final String KPL_MAX_RECORD_SIZE = KplProperties.MAX_USER_RECORD_SIZE;
    private static final String KPL_AGGREGATION_ENABLED = "AggregationEnabled";
    private static final String KPL_AGGREGATION_MAX_COUNT = "AggregationMaxCount";
    /** The KPL properties whose presence makes an unset aggregation mode kpl: the user shapes the KPL's own. */
    public static final Set<String> KPL_AGGREGATION_SHAPERS = Set.of(KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT);
    private static final String KPL_AGGREGATION_MAX_SIZE = "AggregationMaxSize";
    private static final String KPL_DISTRIBUTION_DEFAULT = KplDefaults.DISTRIBUTION_DEFAULT;
    /** The sink options that shape the producer itself, so take part in its identity. */
    private static final SinkOption[] PRODUCER_OPTIONS = {SinkOption.QUEUE_LIMIT, SinkOption.QUEUE_LIMIT_BYTES,
        SinkOption.NATIVE_DIR, SinkOption.PRODUCER_IDLE_TIMEOUT_MS, SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS,
        SinkOption.AWS_ACCESS_KEY_ID, SinkOption.AWS_SECRET_ACCESS_KEY, SinkOption.AWS_SESSION_TOKEN,
        SinkOption.AWS_PROFILE, SinkOption.AWS_ROLE_ARN, SinkOption.AWS_ROLE_SESSION_NAME,
        SinkOption.AWS_STS_ENDPOINT};

    /** The options given, as options or config keys. */
    private final EnumMap<SinkOption, String> sinkOptions;
    /** The KPL properties given, by canonical name. */
    private final TreeMap<String, String> givenKpl;
    /** KPL properties the sink sets for what the driver learnt of the streams (the {@code with} steps). */
    private final TreeMap<String, String> learntKpl;
    /** Each choice option's value given or defaulted. */
    private final EnumMap<SinkOption, Enum<?>> choices = new EnumMap<>(SinkOption.class);
    /** Every option's value, parsed once when this is made. */
    private final WriteOptions options;

    private WriteConfig(EnumMap<SinkOption, String> sinkOptions, TreeMap<String, String> givenKpl,
                        TreeMap<String, String> learntKpl) {
        this.sinkOptions = sinkOptions;
        this.givenKpl = givenKpl;
        this.learntKpl = learntKpl;
        this.options = parse();
    }

    /** The write's values, as its tasks and commit read them. */
    public WriteOptions options() {
        return options;
    }

    /**
     * @param sparkConf the session's configuration (only {@code spark.kpl.*} keys are read)
     * @param options the write's options, any case; they win over config keys
     * @throws IllegalArgumentException naming the first unknown option or key, or bad value
     */
    public static WriteConfig resolve(Map<String, String> sparkConf, Map<String, String> options) {
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
        if (kpl.containsKey(KPL_MAX_RECORD_SIZE)) {
            throw new IllegalArgumentException("Set the option '" + SinkOption.MAX_RECORD_BYTES.optionName()
                + "' instead of the KPL property '" + KPL_MAX_RECORD_SIZE + "': the sink checks each record against it "
                + "(data plus partition key) before the KPL sees it, and sets the KPL's limit to match");
        }
        if (kpl.containsKey(KplProperties.PROXY_PASSWORD)) {
            throw new IllegalArgumentException("The KPL property '" + KplProperties.PROXY_PASSWORD + "' is refused: "
                + "the KPL passes its whole configuration to its native daemon on the command line, where every "
                + "user of the host can read it (ps, /proc/<pid>/cmdline), and logs it at DEBUG. Use a proxy that "
                + "needs no password from this host, for example one on loopback that adds the credentials itself");
        }
        if (!sink.containsKey(SinkOption.AGGREGATION) && KPL_AGGREGATION_SHAPERS.stream().anyMatch(kpl::containsKey)) {
            sink.put(SinkOption.AGGREGATION, "kpl"); // the user shapes the KPL's own aggregation: let it aggregate
        }
        return new WriteConfig(sink, kpl, new TreeMap<>());
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

    /** Each option parsed and checked once, the KPL properties completed, into the write's values. */
    private WriteOptions parse() {
        long queueLimit = positiveLong(SinkOption.QUEUE_LIMIT);
        long queueLimitBytes = positiveLong(SinkOption.QUEUE_LIMIT_BYTES);
        long ackTimeoutMs = positiveLong(SinkOption.ACK_TIMEOUT_MS);
        long idleTimeoutMs = positiveLong(SinkOption.PRODUCER_IDLE_TIMEOUT_MS);
        long shutdownFlushTimeoutMs = positiveLong(SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS);
        long maxRecordBytes = maxRecordBytes();
        for (SinkOption option : SinkOption.values()) {
            if (option.choiceType() != null && value(option) != null) {
                choices.put(option, parseChoice(option));
            }
        }
        boolean allowDuplicates = bool(SinkOption.ALLOW_DUPLICATES);
        boolean failOnError = bool(SinkOption.FAIL_ON_ERROR);
        if (failOnError && value(SinkOption.DEAD_LETTER_PATH) != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "' needs "
                + SinkOption.FAIL_ON_ERROR.optionName() + "=false: with failOnError=true (the default) an undelivered "
                + "record fails the task instead");
        }
        checkWriteName();
        Format format = choice(SinkOption.FORMAT, Format.class);
        if (sinkOptions.containsKey(SinkOption.NULL_DATA) && format != Format.RAW) {
            throw new IllegalArgumentException("Option '" + SinkOption.NULL_DATA.optionName() + "' would be ignored: "
                + "it is about the data column of format=raw, and format=" + SinkOption.written(format)
                + " serializes whole rows, which are never null");
        }
        String defaultPartition = value(SinkOption.DEFAULT_PARTITION);
        if (defaultPartition != null) {
            try {
                RecordRules.checkPartitionKey(defaultPartition);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid value for option '" + SinkOption.DEFAULT_PARTITION.optionName()
                    + "' (" + SinkOption.DEFAULT_PARTITION.confKey() + "): " + e.getMessage(), e);
            }
        }
        CredentialSource credentials = AwsCredentials.source(this);
        TreeMap<String, String> kpl = new TreeMap<>(givenKpl);
        kpl.putAll(learntKpl);
        // The KPL refuses data over its own limit (1 MiB by default): raise it to the sink's.
        kpl.put(KPL_MAX_RECORD_SIZE, String.valueOf(Math.max(KPL_MIN_RECORD_BYTES, maxRecordBytes)));
        KinesisProducerConfiguration kplConfig = KplProperties.toConfiguration(kpl);
        checkCollectionMaxSize(kplConfig);
        Aggregation aggregation = choice(SinkOption.AGGREGATION, Aggregation.class);
        int aggregateMaxBytes = aggregateMaxBytes(kplConfig, maxRecordBytes);
        boolean tasksAggregate = aggregation == Aggregation.EXECUTOR;
        if (tasksAggregate) {
            checkExecutorAggregation(aggregateMaxBytes, maxRecordBytes);
            // Shard prediction, the per-shard limiter and "Wrong Shard" need the KPL's aggregation on; a
            // count of one keeps it from packing the sink's aggregates into aggregates of aggregates.
            kpl.put(KPL_AGGREGATION_ENABLED, "true");
            kpl.put(KPL_AGGREGATION_MAX_COUNT, "1");
        }
        ProducerSpec producer = new ProducerSpec(kpl, tasksAggregate, queueLimit, queueLimitBytes,
            value(SinkOption.NATIVE_DIR), idleTimeoutMs, shutdownFlushTimeoutMs, credentials, shownProducerOptions());
        return new WriteOptions.Builder()
            .streamName(value(SinkOption.STREAM_NAME))
            .ackTimeoutMs(ackTimeoutMs)
            .failOnError(failOnError)
            .deadLetterPath(value(SinkOption.DEAD_LETTER_PATH))
            .maxRecordBytes(maxRecordBytes)
            .nullData(choice(SinkOption.NULL_DATA, NullData.class))
            .partitioner(choice(SinkOption.PARTITIONER, Partitioner.class))
            .defaultPartition(defaultPartition)
            .recordId(choice(SinkOption.RECORD_ID, RecordId.class))
            .writeName(value(SinkOption.WRITE_NAME))
            .allowDuplicates(allowDuplicates)
            .format(format)
            .checkpointLocation(value(SinkOption.CHECKPOINT_LOCATION))
            .queryName(value(SinkOption.QUERY_NAME))
            .aggregation(aggregation)
            .aggregatesRecords(tasksAggregate || kplConfig.isAggregationEnabled())
            .aggregateMaxBytes(aggregateMaxBytes)
            .resultKey(value(SinkOption.RESULT_KEY))
            .producer(producer)
            .settings(settings(kpl))
            .build();
    }

    /**
     * The KPL fills a PutRecords call up to CollectionMaxSize, counting partition keys as Kinesis does; a
     * record larger than it goes alone, so large records never need it raised.
     */
    private static void checkCollectionMaxSize(KinesisProducerConfiguration kplConfig) {
        long size = kplConfig.getCollectionMaxSize();
        if (size > KINESIS_MAX_CALL_BYTES) {
            throw new IllegalArgumentException("KPL property 'CollectionMaxSize' (" + size + ") is over the "
                + KINESIS_MAX_CALL_BYTES + " bytes (10 MiB) Kinesis takes in one PutRecords call, partition keys "
                + "included: Kinesis refuses a larger call whole, and the KPL would retry it until RecordTtl. A record "
                + "larger than CollectionMaxSize is sent alone in its call, so records up to 10 MiB do not need it raised");
        }
    }

    /** A write name is only read into record ids, so without them it would silently do nothing. */
    private void checkWriteName() {
        String name = value(SinkOption.WRITE_NAME);
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' must name the write, "
                + "got '" + name + "'");
        }
        if (name != null && choice(SinkOption.RECORD_ID, RecordId.class) != RecordId.PREFIX) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' names the write in "
                + "record ids: it needs " + SinkOption.RECORD_ID.optionName() + "=prefix");
        }
    }

    /**
     * The largest aggregate a task builds: the KPL's AggregationMaxSize if given, else its default
     * (51,200) or what fits one Kinesis record if smaller, since every aggregate is one record to the KPL.
     */
    private int aggregateMaxBytes(KinesisProducerConfiguration kplConfig, long maxRecordBytes) {
        long size = kplConfig.getAggregationMaxSize();
        return (int) (givenKpl.containsKey(KPL_AGGREGATION_MAX_SIZE) ? size
            : Math.min(size, largestAggregate(maxRecordBytes)));
    }

    /**
     * The most bytes an aggregate may have (counted as the KPL counts AggregationMaxSize) so that
     * Kinesis takes it: Kinesis counts a record's data plus its partition key, and an aggregate
     * travels under its own one-byte key.
     */
    private static long largestAggregate(long maxRecordBytes) {
        return maxRecordBytes - AggregateBuilder.PARTITION_KEY.length(); // ASCII: one byte a character
    }

    private void checkExecutorAggregation(int aggregateMaxBytes, long maxRecordBytes) {
        for (String property : new String[] {KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT}) {
            if (givenKpl.containsKey(property)) {
                throw new IllegalArgumentException("KPL property '" + property + "' cannot be set with "
                    + SinkOption.AGGREGATION.optionName() + "=executor: the sink sets it (AggregationEnabled=true, "
                    + "AggregationMaxCount=1) so that the KPL sends each of the task's aggregates as it is; size them "
                    + "with AggregationMaxSize");
            }
        }
        if (aggregateMaxBytes > largestAggregate(maxRecordBytes)) {
            throw new IllegalArgumentException("KPL property 'AggregationMaxSize' (" + aggregateMaxBytes + ") is over "
                + "what one Kinesis record holds with " + SinkOption.AGGREGATION.optionName() + "=executor: at most "
                + largestAggregate(maxRecordBytes) + ", " + SinkOption.MAX_RECORD_BYTES.optionName() + "="
                + maxRecordBytes + " less the aggregate's partition key '" + AggregateBuilder.PARTITION_KEY
                + "' (Kinesis counts data plus partition key)");
        }
    }

    /**
     * The producer for rows that name a stream which places records itself (AUTO), found by the
     * executors: one Kinesis record per row, the KPL's aggregation and shard prediction off, its daemon
     * told the stream is AUTO ({@link #unaggregatedAuto}). Another producer than the write's, so that
     * the write's daemon is told every other stream places by key and never describes one itself: it
     * sends what comes before its answer as if Kinesis placed it, some aggregates to the wrong shard.
     *
     * @return null when the user set RecordDistributionStrategyDefault: every row goes as they said
     */
    public ProducerSpec producerForAutoStreams() {
        return givenKpl.containsKey(KPL_DISTRIBUTION_DEFAULT) ? null : unaggregatedAuto().options().producer();
    }

    /**
     * This write's settings for a stream that places records itself (record distribution strategy
     * AUTO): Kinesis ignores partition and explicit hash keys there, so an aggregate lands in any
     * shard, where a KCL consumer drops its records. One Kinesis record per row then, and the KPL's
     * aggregation and shard prediction off (with prediction on, the KPL retries every record Kinesis
     * placed elsewhere as "Wrong Shard" until it expires), its daemon told the stream is AUTO.
     *
     * @throws IllegalArgumentException when the user asked for aggregation, naming the stream and option
     */
    public WriteConfig withoutAggregationFor(String stream) {
        String why = "Stream '" + stream + "' places records itself (its record distribution strategy is AUTO), "
            + "ignoring partition and explicit hash keys, so a KCL consumer drops aggregated records. ";
        boolean tasksAggregate = options.aggregatesInExecutor();
        if (tasksAggregate && sinkOptions.containsKey(SinkOption.AGGREGATION)) {
            throw new IllegalArgumentException(why + "Option '" + SinkOption.AGGREGATION.optionName() + "=executor' "
                + "cannot be used with it: leave the option out, and the sink sends one Kinesis record per row");
        }
        if (!tasksAggregate && "true".equalsIgnoreCase(givenKpl.getOrDefault(KPL_AGGREGATION_ENABLED, ""))) {
            throw new IllegalArgumentException(why + "KPL property '" + KPL_AGGREGATION_ENABLED + "=true' cannot be "
                + "used with it: leave it out, and the sink sends one Kinesis record per row");
        }
        return unaggregatedAuto();
    }

    /** These settings with one Kinesis record per row, the KPL told the streams are AUTO unless the user said. */
    private WriteConfig unaggregatedAuto() {
        EnumMap<SinkOption, String> sink = new EnumMap<>(sinkOptions);
        sink.put(SinkOption.AGGREGATION, SinkOption.written(Aggregation.KPL));
        TreeMap<String, String> learnt = new TreeMap<>(learntKpl);
        learnt.put(KPL_AGGREGATION_ENABLED, "false");
        if (!givenKpl.containsKey(KPL_DISTRIBUTION_DEFAULT)) {
            learnt.put(KPL_DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.AUTO.name());
        }
        return new WriteConfig(sink, givenKpl, learnt);
    }

    private boolean bool(SinkOption option) {
        String value = value(option).trim();
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw invalid(option, "true or false", value);
        }
        return Boolean.parseBoolean(value);
    }

    /** The most bytes (data plus partition key) a record may have. */
    private long maxRecordBytes() {
        long value = positiveLong(SinkOption.MAX_RECORD_BYTES);
        if (value > KPL_MAX_RECORD_BYTES) {
            throw invalid(SinkOption.MAX_RECORD_BYTES, "1 to " + KPL_MAX_RECORD_BYTES + " (10 MiB, the KPL's limit)",
                String.valueOf(value));
        }
        return value;
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
    private <E extends Enum<E>> E choice(SinkOption option, Class<E> type) {
        return type.cast(choices.get(option));
    }

    private static IllegalArgumentException invalid(SinkOption option, String expected, String value) {
        return new IllegalArgumentException("Invalid value for option '" + option.optionName() + "' ("
            + option.confKey() + "): expected " + expected + ", got '" + value + "'");
    }

    private long positiveLong(SinkOption option) {
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

    /** The value given for an option, else its default, else null. */
    String value(SinkOption option) {
        String value = sinkOptions.get(option);
        return value != null ? value : option.defaultValue().orElse(null);
    }

    /** Whether the option was given (as an option or config key), as opposed to defaulted. */
    boolean given(SinkOption option) {
        return sinkOptions.containsKey(option);
    }

    /** The sink options that shape a producer, by config key, secrets masked. */
    private Map<String, String> shownProducerOptions() {
        Map<String, String> shown = new TreeMap<>();
        for (SinkOption option : PRODUCER_OPTIONS) {
            String value = value(option);
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
    private Map<String, String> settings(Map<String, String> kpl) {
        Map<String, String> settings = new TreeMap<>();
        for (SinkOption option : SinkOption.values()) {
            String value = value(option);
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
