package sparkkpl.config;

import java.util.Map;
import java.util.TreeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

/**
 * The driver's one step from a write's strings to its values: {@code spark.kpl.*} config keys overlaid by
 * the DataFrame's options, each parsed and checked once here (so a mistake fails before any task
 * starts) into the {@link WriteOptions} and {@link ProducerSpec} that the executors receive. The
 * grammar is {@link GivenOptions}'s, the rules between options {@link OptionRules}', the KPL properties
 * the sink sets {@link KplDerivation}'s, the AUTO variant {@link AutoStreams}' and the masking
 * {@link ShownSettings}'.
 */
public final class WriteConfig {
    /** Every option's value, parsed once when this is made. */
    private final WriteOptions options;
    /** The write's values for a stream that places records itself, decided with {@link #options}. */
    private final AutoStreams autoStreams;

    private WriteConfig(GivenOptions given) {
        this.options = parse(given, new TreeMap<>());
        this.autoStreams = AutoStreams.of(given, options);
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
        GivenOptions given = GivenOptions.gather(sparkConf, options);
        OptionRules.refuseSinkOwnedKplProperties(given.kpl());
        return new WriteConfig(OptionRules.impliedAggregation(given));
    }

    /**
     * Each option parsed and checked once, the KPL properties completed, into the write's values.
     *
     * @param learntKpl KPL properties the sink sets for what it knows of the streams (the AUTO variant)
     */
    static WriteOptions parse(GivenOptions given, TreeMap<String, String> learntKpl) {
        long queueLimit = given.positiveLong(SinkOption.QUEUE_LIMIT);
        long queueLimitBytes = given.positiveLong(SinkOption.QUEUE_LIMIT_BYTES);
        long ackTimeoutMs = given.positiveLong(SinkOption.ACK_TIMEOUT_MS);
        long idleTimeoutMs = given.positiveLong(SinkOption.PRODUCER_IDLE_TIMEOUT_MS);
        long shutdownFlushTimeoutMs = given.positiveLong(SinkOption.SHUTDOWN_FLUSH_TIMEOUT_MS);
        long maxRecordBytes = OptionRules.maxRecordBytes(given);
        given.parseChoices();
        boolean allowDuplicates = given.bool(SinkOption.ALLOW_DUPLICATES);
        boolean failOnError = given.bool(SinkOption.FAIL_ON_ERROR);
        OptionRules.checkDeadLetters(given, failOnError);
        OptionRules.checkWriteName(given);
        Format format = given.choice(SinkOption.FORMAT, Format.class);
        OptionRules.checkNullData(given, format);
        String defaultPartition = OptionRules.defaultPartition(given);
        CredentialSource credentials = AwsCredentials.source(given);
        TreeMap<String, String> kpl = given.kpl();
        kpl.putAll(learntKpl);
        KplDerivation.setMaxRecordSize(kpl, maxRecordBytes);
        KinesisProducerConfiguration kplConfig = KplProperties.parsed(kpl).configuration();
        OptionRules.checkCollectionMaxSize(kplConfig);
        Aggregation aggregation = given.choice(SinkOption.AGGREGATION, Aggregation.class);
        int aggregateMaxBytes = KplDerivation.aggregateMaxBytes(given, kplConfig, maxRecordBytes);
        boolean tasksAggregate = aggregation == Aggregation.EXECUTOR;
        if (tasksAggregate) {
            OptionRules.checkExecutorAggregation(given, aggregateMaxBytes, maxRecordBytes);
            KplDerivation.setForExecutorAggregation(kpl);
        }
        ProducerSpec producer = new ProducerSpec(KplProperties.parsed(kpl), tasksAggregate, queueLimit, queueLimitBytes,
            given.value(SinkOption.NATIVE_DIR), idleTimeoutMs, shutdownFlushTimeoutMs, credentials,
            ShownSettings.producerOptions(given));
        return new WriteOptions.Builder()
            .streamName(given.value(SinkOption.STREAM_NAME))
            .ackTimeoutMs(ackTimeoutMs)
            .failOnError(failOnError)
            .deadLetterPath(given.value(SinkOption.DEAD_LETTER_PATH))
            .maxRecordBytes(maxRecordBytes)
            .nullData(given.choice(SinkOption.NULL_DATA, NullData.class))
            .partitioner(given.choice(SinkOption.PARTITIONER, Partitioner.class))
            .defaultPartition(defaultPartition)
            .recordId(given.choice(SinkOption.RECORD_ID, RecordId.class))
            .writeName(given.value(SinkOption.WRITE_NAME))
            .allowDuplicates(allowDuplicates)
            .format(format)
            .checkpointLocation(given.value(SinkOption.CHECKPOINT_LOCATION))
            .queryName(given.value(SinkOption.QUERY_NAME))
            .aggregation(aggregation)
            .aggregatesRecords(tasksAggregate || kplConfig.isAggregationEnabled())
            .aggregateMaxBytes(aggregateMaxBytes)
            .resultKey(given.value(SinkOption.RESULT_KEY))
            .producer(producer)
            .settings(ShownSettings.settings(given, kpl))
            .build();
    }

    /**
     * The producer for rows that name a stream which places records itself (AUTO), found by the executors:
     * one Kinesis record per row, its daemon told the stream is AUTO ({@link AutoStreams}).
     *
     * @return null when the user set RecordDistributionStrategyDefault: every row goes as they said
     */
    public ProducerSpec producerForAutoStreams() {
        return autoStreams.producer();
    }

    /**
     * This write's values for a stream that places records itself (record distribution strategy AUTO):
     * one Kinesis record per row, the KPL's aggregation and shard prediction off ({@link AutoStreams}).
     *
     * @throws IllegalArgumentException when the user asked for aggregation, naming the stream and option
     */
    public WriteOptions forAutoStream(String stream) {
        return autoStreams.forStream(stream);
    }
}
