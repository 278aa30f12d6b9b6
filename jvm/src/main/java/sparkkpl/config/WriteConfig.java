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
        OptionRules.checkMaxRecordBytes(given);
        TreeMap<String, String> kplText = given.kpl();
        KplDerivation.setMaxRecordSize(kplText, given.get(SinkOption.MAX_RECORD_BYTES));
        KplValues kpl = KplProperties.parsed(kplText);
        this.options = read(given, kpl);
        this.autoStreams = AutoStreams.of(given, options, kpl);
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
    public static WriteConfig read(Map<String, String> sparkConf, Map<String, String> options) {
        return new WriteConfig(GivenOptions.gather(sparkConf, options));
    }

    /**
     * The write's values from its options, each read once, and its KPL properties, parsed once; the rules
     * between them checked.
     *
     * @param kpl the KPL properties given, with the record size the sink sets
     */
    private static WriteOptions read(GivenOptions given, KplValues kpl) {
        OptionRules.checkDeadLetters(given);
        OptionRules.checkWriteName(given);
        OptionRules.checkNullData(given);
        OptionRules.checkDefaultPartition(given);
        OptionRules.checkSchemaRegistry(given);
        long maxRecordBytes = given.get(SinkOption.MAX_RECORD_BYTES);
        KinesisProducerConfiguration kplConfig = kpl.configuration();
        OptionRules.checkCollectionMaxSize(kplConfig);
        Aggregation aggregation = given.get(SinkOption.AGGREGATION);
        int aggregateMaxBytes = KplDerivation.aggregateMaxBytes(given, kplConfig, maxRecordBytes);
        boolean tasksAggregate = aggregation == Aggregation.EXECUTOR;
        OptionRules.checkOrdering(given, tasksAggregate);
        KplValues producerKpl = kpl;
        if (tasksAggregate) {
            OptionRules.checkExecutorAggregation(given, aggregateMaxBytes, maxRecordBytes);
            producerKpl = kpl.with(KplDerivation.forExecutorAggregation(given.givenKpl(KplDerivation.KPL_RATE_LIMIT)));
        }
        ProducerSpec.Options producerOptions = OptionGroups.read(ProducerSpec.Options.class, given,
            Map.of("credentials", CredentialOptions.source(given)));
        ProducerSpec producer = new ProducerSpec(producerKpl, tasksAggregate, producerOptions,
            ShownSettings.producerOptions(given));
        WriteOptions.Aggregating aggregating = OptionGroups.read(WriteOptions.Aggregating.class, given, Map.of(
            "aggregatesRecords", tasksAggregate || kplConfig.isAggregationEnabled(), "aggregateMaxBytes", aggregateMaxBytes));
        return new WriteOptions(OptionGroups.read(WriteOptions.Target.class, given, Map.of()),
            OptionGroups.read(WriteOptions.Delivery.class, given, Map.of()),
            OptionGroups.read(WriteOptions.RecordShape.class, given, Map.of()),
            OptionGroups.read(WriteOptions.Registry.class, given, Map.of()), aggregating,
            OptionGroups.read(WriteOptions.Query.class, given, Map.of()), producer, given.get(SinkOption.RESULT_KEY),
            ShownSettings.settings(given, producerKpl.asText()));
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
