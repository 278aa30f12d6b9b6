package sparkkpl.config;

import java.io.Serializable;
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

/**
 * One write's settings, resolved on the driver from {@code spark.kpl.*} config keys overlaid by
 * the DataFrame's options, checked there (so a mistake fails before any task starts) and shipped
 * to the executors.
 */
public final class WriteConfig implements Serializable {
    private static final long serialVersionUID = 1L;
    /** KinesisProducerConfiguration.setMaxUserRecordSize accepts up to 10 MiB (KPL 1.0.6+). */
    public static final long KPL_MAX_RECORD_BYTES = 10L << 20;
    /** ... and no less than 64 bytes. */
    private static final long KPL_MIN_RECORD_BYTES = 64;
    /** Kinesis takes 10 MiB per PutRecords call, partition keys included, and refuses a larger call whole. */
    private static final long KINESIS_MAX_CALL_BYTES = 10L << 20;
    private static final String KPL_MAX_RECORD_SIZE = KplProperties.MAX_USER_RECORD_SIZE;
    private static final String KPL_AGGREGATION_ENABLED = "AggregationEnabled";
    private static final String KPL_DISTRIBUTION_DEFAULT = "RecordDistributionStrategyDefault";
    private static final String KPL_AGGREGATION_MAX_COUNT = "AggregationMaxCount";
    /** The KPL properties whose presence makes an unset aggregation mode kpl: the user shapes the KPL's own. */
    public static final Set<String> KPL_AGGREGATION_SHAPERS = Set.of(KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT);
    private static final String KPL_AGGREGATION_MAX_SIZE = "AggregationMaxSize";
    private static final String KPL_LOG_LEVEL = "LogLevel";
    private static final String KPL_RECORD_MAX_BUFFERED_TIME = "RecordMaxBufferedTime";
    /**
     * The KPL's RecordMaxBufferedTime for a producer of the tasks' aggregates, unless the user gives
     * it: how long the daemon gathers records into a PutRecords call (see {@link #producerConfiguration}).
     */
    static final long EXECUTOR_AGGREGATES_BUFFERED_MS = 10;
    /** The daemon's log level unless the user gives one: its warnings are per request and not the user's to act on. */
    private static final String QUIET_LOG_LEVEL = "error";
    /**
     * The KPL properties the sink sets itself when the user gives none, and to what (see
     * {@link #producerConfiguration}): the config example says so beside the KPL's own default.
     */
    public static final Map<String, String> KPL_PROPERTIES_THE_SINK_SETS = Map.of(
        KPL_RECORD_MAX_BUFFERED_TIME, EXECUTOR_AGGREGATES_BUFFERED_MS + " with aggregation=executor",
        KPL_DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.USER_PARTITION_KEY.name(),
        KPL_LOG_LEVEL, QUIET_LOG_LEVEL);
    /** The sink options that shape the producer itself, so take part in its identity. */
    private static final SinkOption[] PRODUCER_OPTIONS = {SinkOption.QUEUE_LIMIT, SinkOption.QUEUE_LIMIT_BYTES,
        SinkOption.NATIVE_DIR, SinkOption.PRODUCER_IDLE_TIMEOUT_MS, SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS,
        SinkOption.AWS_ACCESS_KEY_ID, SinkOption.AWS_SECRET_ACCESS_KEY, SinkOption.AWS_SESSION_TOKEN,
        SinkOption.AWS_PROFILE, SinkOption.AWS_ROLE_ARN, SinkOption.AWS_ROLE_SESSION_NAME,
        SinkOption.AWS_STS_ENDPOINT};

    private final EnumMap<SinkOption, String> sinkOptions;
    /** Canonical KPL property name to value; also the producer's identity on an executor. */
    private final TreeMap<String, String> kplProperties;
    /** Each choice option's value given or defaulted, parsed once by {@link #validate}. */
    private final EnumMap<SinkOption, Enum<?>> choices = new EnumMap<>(SinkOption.class);

    private WriteConfig(EnumMap<SinkOption, String> sinkOptions, TreeMap<String, String> kplProperties) {
        this.sinkOptions = sinkOptions;
        this.kplProperties = kplProperties;
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
        WriteConfig config = new WriteConfig(sink, kpl);
        config.validate();
        // The KPL refuses data over its own limit (1 MiB by default): raise it to the sink's.
        kpl.put(KPL_MAX_RECORD_SIZE, String.valueOf(Math.max(KPL_MIN_RECORD_BYTES, config.maxRecordBytes())));
        if (config.aggregatesInExecutor()) {
            config.checkExecutorAggregation();
            // Shard prediction, the per-shard limiter and "Wrong Shard" need the KPL's aggregation on; a
            // count of one keeps it from packing the sink's aggregates into aggregates of aggregates.
            kpl.put(KPL_AGGREGATION_ENABLED, "true");
            kpl.put(KPL_AGGREGATION_MAX_COUNT, "1");
        }
        return config;
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

    private void validate() {
        positiveLong(SinkOption.QUEUE_LIMIT);
        positiveLong(SinkOption.QUEUE_LIMIT_BYTES);
        positiveLong(SinkOption.ACK_TIMEOUT_MS);
        positiveLong(SinkOption.PRODUCER_IDLE_TIMEOUT_MS);
        positiveLong(SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS);
        maxRecordBytes();
        for (SinkOption option : SinkOption.values()) {
            if (option.choiceType() != null && get(option).isPresent()) {
                choices.put(option, parseChoice(option));
            }
        }
        getBoolean(SinkOption.ALLOW_DUPLICATES);
        boolean failOnError = getBoolean(SinkOption.FAIL_ON_ERROR);
        if (failOnError && get(SinkOption.DEAD_LETTER_PATH).isPresent()) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "' needs "
                + SinkOption.FAIL_ON_ERROR.optionName() + "=false: with failOnError=true (the default) an undelivered "
                + "record fails the task instead");
        }
        checkWriteName();
        if (hasValue(SinkOption.NULL_DATA) && format() != Format.RAW) {
            throw new IllegalArgumentException("Option '" + SinkOption.NULL_DATA.optionName() + "' would be ignored: "
                + "it is about the data column of format=raw, and format=" + SinkOption.written(format())
                + " serializes whole rows, which are never null");
        }
        AwsCredentials.validate(this);
        checkCollectionMaxSize();
    }

    /**
     * The KPL fills a PutRecords call up to CollectionMaxSize, counting partition keys as Kinesis does; a
     * record larger than it goes alone, so large records never need it raised.
     */
    private void checkCollectionMaxSize() {
        long size = kplConfiguration().getCollectionMaxSize();
        if (size > KINESIS_MAX_CALL_BYTES) {
            throw new IllegalArgumentException("KPL property 'CollectionMaxSize' (" + size + ") is over the "
                + KINESIS_MAX_CALL_BYTES + " bytes (10 MiB) Kinesis takes in one PutRecords call, partition keys "
                + "included: Kinesis refuses a larger call whole, and the KPL would retry it until RecordTtl. A record "
                + "larger than CollectionMaxSize is sent alone in its call, so records up to 10 MiB do not need it raised");
        }
    }

    /** Whether several rows may travel in one Kinesis record: built by the tasks, or by the KPL. */
    public boolean aggregatesRecords() {
        return aggregatesInExecutor() || kplConfiguration().isAggregationEnabled();
    }

    /** A write name is only read into record ids, so without them it would silently do nothing. */
    private void checkWriteName() {
        Optional<String> name = get(SinkOption.WRITE_NAME);
        if (name.isPresent() && name.get().isBlank()) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' must name the write, "
                + "got '" + name.get() + "'");
        }
        if (name.isPresent() && recordId() != RecordId.PREFIX) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' names the write in "
                + "record ids: it needs " + SinkOption.RECORD_ID.optionName() + "=prefix");
        }
    }

    /** With aggregation=executor: the task builds the aggregates, the KPL sends each as one record. */
    public boolean aggregatesInExecutor() {
        return aggregation() == Aggregation.EXECUTOR;
    }

    /**
     * The largest aggregate a task builds: the KPL's AggregationMaxSize if given, else its default
     * (51,200) or what fits one Kinesis record if smaller, since every aggregate is one record to the KPL.
     */
    public int aggregateMaxBytes() {
        long size = kplConfiguration().getAggregationMaxSize();
        return (int) (kplProperties.containsKey(KPL_AGGREGATION_MAX_SIZE) ? size : Math.min(size, largestAggregate()));
    }

    /**
     * The most bytes an aggregate may have (counted as the KPL counts AggregationMaxSize) so that
     * Kinesis takes it: Kinesis counts a record's data plus its partition key, and an aggregate
     * travels under its own one-byte key.
     */
    private long largestAggregate() {
        return maxRecordBytes() - AggregateBuilder.PARTITION_KEY.length(); // ASCII: one byte a character
    }

    private void checkExecutorAggregation() {
        for (String property : new String[] {KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT}) {
            if (kplProperties.containsKey(property)) {
                throw new IllegalArgumentException("KPL property '" + property + "' cannot be set with "
                    + SinkOption.AGGREGATION.optionName() + "=executor: the sink sets it (AggregationEnabled=true, "
                    + "AggregationMaxCount=1) so that the KPL sends each of the task's aggregates as it is; size them "
                    + "with AggregationMaxSize");
            }
        }
        if (aggregateMaxBytes() > largestAggregate()) {
            throw new IllegalArgumentException("KPL property 'AggregationMaxSize' (" + aggregateMaxBytes() + ") is over "
                + "what one Kinesis record holds with " + SinkOption.AGGREGATION.optionName() + "=executor: at most "
                + largestAggregate() + ", " + SinkOption.MAX_RECORD_BYTES.optionName() + "=" + maxRecordBytes()
                + " less the aggregate's partition key '" + AggregateBuilder.PARTITION_KEY
                + "' (Kinesis counts data plus partition key)");
        }
    }

    /**
     * This write's settings when rows name their streams: the driver describes the option's stream
     * only, so KPL 1.1's daemon describes each stream itself (UNSET) unless the user said how. Told
     * every stream places by key, it would predict shards on a stream rows name that is AUTO and send
     * again, as "Wrong Shard", every row Kinesis placed elsewhere.
     */
    public WriteConfig withStreamsTheDaemonDescribes() {
        if (kplProperties.containsKey(KPL_DISTRIBUTION_DEFAULT)) {
            return this;
        }
        TreeMap<String, String> kpl = new TreeMap<>(kplProperties);
        kpl.put(KPL_DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.UNSET.name());
        return new WriteConfig(new EnumMap<>(sinkOptions), kpl);
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
        if (aggregatesInExecutor() && hasValue(SinkOption.AGGREGATION)) {
            throw new IllegalArgumentException(why + "Option '" + SinkOption.AGGREGATION.optionName() + "=executor' "
                + "cannot be used with it: leave the option out, and the sink sends one Kinesis record per row");
        }
        if (!aggregatesInExecutor() && "true".equalsIgnoreCase(kplProperties.getOrDefault(KPL_AGGREGATION_ENABLED, ""))) {
            throw new IllegalArgumentException(why + "KPL property '" + KPL_AGGREGATION_ENABLED + "=true' cannot be "
                + "used with it: leave it out, and the sink sends one Kinesis record per row");
        }
        EnumMap<SinkOption, String> sink = new EnumMap<>(sinkOptions);
        sink.put(SinkOption.AGGREGATION, SinkOption.written(Aggregation.KPL));
        TreeMap<String, String> kpl = new TreeMap<>(kplProperties);
        if (aggregatesInExecutor()) {
            kpl.remove(KPL_AGGREGATION_MAX_COUNT); // the sink's own setting, not the user's
        }
        kpl.put(KPL_AGGREGATION_ENABLED, "false");
        kpl.putIfAbsent(KPL_DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.AUTO.name());
        WriteConfig config = new WriteConfig(sink, kpl);
        config.validate();
        return config;
    }

    /** Whether the option was given (as an option or config key), as opposed to defaulted. */
    boolean hasValue(SinkOption option) {
        return sinkOptions.containsKey(option);
    }

    /** @throws IllegalArgumentException naming the option and its config key unless true or false */
    public boolean getBoolean(SinkOption option) {
        String value = get(option).orElseThrow().trim();
        if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
            throw invalid(option, "true or false", value);
        }
        return Boolean.parseBoolean(value);
    }

    /** The most bytes (data plus partition key) a record may have. */
    public long maxRecordBytes() {
        long value = positiveLong(SinkOption.MAX_RECORD_BYTES);
        if (value > KPL_MAX_RECORD_BYTES) {
            throw invalid(SinkOption.MAX_RECORD_BYTES, "1 to " + KPL_MAX_RECORD_BYTES + " (10 MiB, the KPL's limit)",
                String.valueOf(value));
        }
        return value;
    }

    /** @throws IllegalArgumentException naming the option, its config key and its choices */
    private Enum<?> parseChoice(SinkOption option) {
        String given = get(option).orElseThrow();
        String wanted = given.trim().toLowerCase(Locale.ROOT);
        for (Enum<?> choice : option.choiceType().getEnumConstants()) {
            if (SinkOption.written(choice).equals(wanted)) {
                return choice;
            }
        }
        throw invalid(option, "one of " + String.join(", ", option.choices()), given);
    }

    private <E extends Enum<E>> E choice(SinkOption option, Class<E> type) {
        return type.cast(choices.get(option));
    }

    public NullData nullData() {
        return choice(SinkOption.NULL_DATA, NullData.class);
    }

    /** Empty when not given: the rows' columns then decide. */
    public Optional<Partitioner> partitioner() {
        return Optional.ofNullable(choice(SinkOption.PARTITIONER, Partitioner.class));
    }

    public RecordId recordId() {
        return choice(SinkOption.RECORD_ID, RecordId.class);
    }

    public Format format() {
        return choice(SinkOption.FORMAT, Format.class);
    }

    public Aggregation aggregation() {
        return choice(SinkOption.AGGREGATION, Aggregation.class);
    }

    private static IllegalArgumentException invalid(SinkOption option, String expected, String value) {
        return new IllegalArgumentException("Invalid value for option '" + option.optionName() + "' ("
            + option.confKey() + "): expected " + expected + ", got '" + value + "'");
    }

    private long positiveLong(SinkOption option) {
        String value = get(option).orElseThrow();
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

    /** The value given for an option, else its default. */
    public Optional<String> get(SinkOption option) {
        String value = sinkOptions.get(option);
        return value != null ? Optional.of(value) : option.defaultValue();
    }

    public long getLong(SinkOption option) {
        return positiveLong(option);
    }

    public Map<String, String> kplProperties() {
        return Collections.unmodifiableMap(kplProperties);
    }

    /**
     * What makes two writes share a producer on an executor: the KPL properties (credentials
     * included, never logged) and the options that shape the producer itself.
     */
    public Map<String, String> producerIdentity() {
        Map<String, String> identity = new TreeMap<>(kplProperties);
        for (SinkOption option : PRODUCER_OPTIONS) {
            get(option).ifPresent(value -> identity.put(option.confKey(), value));
        }
        return Collections.unmodifiableMap(identity);
    }

    /** A fresh KPL configuration built from the properties (validated by the KPL's own setters). */
    public KinesisProducerConfiguration kplConfiguration() {
        return KplProperties.toConfiguration(kplProperties);
    }

    /**
     * The KPL configuration a producer for this write starts from (before the daemon's placement and
     * credentials): the properties given, and the sink's own choice for two the user did not set.
     */
    public KinesisProducerConfiguration producerConfiguration() {
        KinesisProducerConfiguration kpl = kplConfiguration();
        // The KPL leaves a future it lost (e.g. a duplicate result after a retried request)
        // pending forever unless told to time it out; past its TTL a record cannot succeed anyway.
        if (kpl.getUserRecordTimeoutInMillis() == 0) {
            kpl.setUserRecordTimeoutInMillis(lostRecordTimeoutMs(kpl));
        }
        // The KPL (1.0.9, unchanged in 1.1.1) keeps every outstanding record in a heap only to log
        // the oldest one, and removes each acknowledged record by a linear scan: at a 100,000-record
        // queue limit that halves throughput. Off unless asked for.
        if (!kplProperties.containsKey("EnableOldestFutureTracker")) {
            kpl.setEnableOldestFutureTracker(false);
        }
        // KPL 1.1's daemon otherwise describes each stream on its first record, once per executor, and
        // sends what arrives meanwhile as if Kinesis placed it (aggregates without their explicit hash
        // key, stored in the wrong shard). The driver's look has the answer; an AUTO stream's write
        // carries it as a property (withoutAggregationFor), every other stream places by key.
        if (!kplProperties.containsKey(KPL_DISTRIBUTION_DEFAULT)) {
            kpl.setRecordDistributionStrategyDefault(RecordDistributionStrategyDefault.USER_PARTITION_KEY);
        }
        // The tasks' aggregates are complete when the KPL gets them, so its buffering only gathers them
        // into PutRecords calls; but it holds the last ones of every task, at commit, for the whole
        // RecordMaxBufferedTime (100 ms; a flush sends them 80 ms later), which every streaming
        // micro-batch waited out. The tasks still seal open aggregates by age at the user's value.
        if (aggregatesInExecutor() && !kplProperties.containsKey(KPL_RECORD_MAX_BUFFERED_TIME)) {
            kpl.setRecordMaxBufferedTime(EXECUTOR_AGGREGATES_BUFFERED_MS);
        }
        if (!kplLogsVerbosely()) {
            kpl.setLogLevel(QUIET_LOG_LEVEL);
        }
        return kpl;
    }

    /** Whether the user set the KPL's LogLevel: the switch that makes the KPL and its daemon speak. */
    public boolean kplLogsVerbosely() {
        return kplProperties.containsKey(KPL_LOG_LEVEL);
    }

    /**
     * How long the KPL may take to answer for a record before the sink counts it as lost and fails
     * its task: the KPL's own UserRecordTimeoutInMillis, as a producer for this write runs with it.
     */
    public long recordAnswerTimeoutMs() {
        return producerConfiguration().getUserRecordTimeoutInMillis();
    }

    /** A record's TTL, plus its last request's time, plus a margin for a slow callback. */
    static long lostRecordTimeoutMs(KinesisProducerConfiguration kpl) {
        long margin = 2 * kpl.getRequestTimeout() + 30_000;
        return kpl.getRecordTtl() > Long.MAX_VALUE - margin ? Long.MAX_VALUE : kpl.getRecordTtl() + margin;
    }

    /**
     * What this write runs with, by config key: every sink option (given or default) and every KPL
     * property given. Secrets are masked: this reaches logs, the Spark UI and users' checks.
     */
    public Map<String, String> settings() {
        Map<String, String> settings = new TreeMap<>();
        for (SinkOption option : SinkOption.values()) {
            if (!option.isInternal()) {
                get(option).ifPresent(value -> settings.put(option.confKey(), shown(option, value)));
            }
        }
        kplProperties.forEach((name, value) ->
            settings.put(SinkOption.CONF_PREFIX + name, KplProperties.isSecret(name) ? KplProperties.MASK : value));
        return settings;
    }

    /**
     * What a producer built for this write runs with, by config key: the sink options that shape
     * it, and every KPL property as {@code kplConfig} (the one handed to the KPL) holds it.
     */
    public Map<String, String> producerSettings(KinesisProducerConfiguration kplConfig) {
        Map<String, String> settings = new TreeMap<>();
        for (SinkOption option : PRODUCER_OPTIONS) {
            get(option).ifPresent(value -> settings.put(option.confKey(), shown(option, value)));
        }
        KplProperties.readBack(kplConfig).forEach((name, value) -> settings.put(SinkOption.CONF_PREFIX + name, value));
        return Collections.unmodifiableMap(settings);
    }

    private static String shown(SinkOption option, String value) {
        return option.isSecret() ? KplProperties.MASK : value;
    }

    @Override
    public String toString() {
        return "WriteConfig" + settings();
    }
}
