package sparkkpl.config;

import java.util.Map;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.RecordRules;

/**
 * The rules between a write's options: what one option needs or rules out of another, and the KPL
 * properties the sink owns. Each throws an {@link IllegalArgumentException} naming the options, so a
 * mistake fails on the driver before any task starts.
 */
final class OptionRules {
    /** Kinesis takes 10 MiB per PutRecords call, partition keys included, and refuses a larger call whole. */
    private static final long KINESIS_MAX_CALL_BYTES = 10L << 20;

    private OptionRules() {}

    /** KPL properties the sink sets itself, or that would leak a secret: given, they are refused. */
    static void refuseSinkOwnedKplProperties(Map<String, String> kpl) {
        if (kpl.containsKey(KplDerivation.KPL_MAX_RECORD_SIZE)) {
            throw new IllegalArgumentException("Set the option '" + SinkOption.MAX_RECORD_BYTES.optionName()
                + "' instead of the KPL property '" + KplDerivation.KPL_MAX_RECORD_SIZE + "': the sink checks each "
                + "record against it (data plus partition key) before the KPL sees it, and sets the KPL's limit to match");
        }
        if (kpl.containsKey(KplProperties.PROXY_PASSWORD)) {
            throw new IllegalArgumentException("The KPL property '" + KplProperties.PROXY_PASSWORD + "' is refused: "
                + "the KPL passes its whole configuration to its native daemon on the command line, where every "
                + "user of the host can read it (ps, /proc/<pid>/cmdline), and logs it at DEBUG. Use a proxy that "
                + "needs no password from this host, for example one on loopback that adds the credentials itself");
        }
    }

    /** The user shapes the KPL's own aggregation: an unset aggregation mode lets it aggregate. */
    static GivenOptions impliedAggregation(GivenOptions given) {
        if (!given.given(SinkOption.AGGREGATION)
                && KplDerivation.KPL_AGGREGATION_SHAPERS.stream().anyMatch(given::givenKpl)) {
            return given.with(SinkOption.AGGREGATION, "kpl");
        }
        return given;
    }

    /** The most bytes (data plus partition key) a record may have. */
    static long maxRecordBytes(GivenOptions given) {
        long value = given.positiveLong(SinkOption.MAX_RECORD_BYTES);
        if (value > KplDerivation.KPL_MAX_RECORD_BYTES) {
            throw GivenOptions.invalid(SinkOption.MAX_RECORD_BYTES, "1 to " + KplDerivation.KPL_MAX_RECORD_BYTES
                + " (10 MiB, the KPL's limit)", String.valueOf(value));
        }
        return value;
    }

    static void checkDeadLetters(GivenOptions given, boolean failOnError) {
        if (failOnError && given.value(SinkOption.DEAD_LETTER_PATH) != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "' needs "
                + SinkOption.FAIL_ON_ERROR.optionName() + "=false: with failOnError=true (the default) an undelivered "
                + "record fails the task instead");
        }
    }

    /** A write name is only read into record ids, so without them it would silently do nothing. */
    static void checkWriteName(GivenOptions given) {
        String name = given.value(SinkOption.WRITE_NAME);
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' must name the write, "
                + "got '" + name + "'");
        }
        if (name != null && given.choice(SinkOption.RECORD_ID, RecordId.class) != RecordId.PREFIX) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' names the write in "
                + "record ids: it needs " + SinkOption.RECORD_ID.optionName() + "=prefix");
        }
    }

    static void checkNullData(GivenOptions given, Format format) {
        if (given.given(SinkOption.NULL_DATA) && format != Format.RAW) {
            throw new IllegalArgumentException("Option '" + SinkOption.NULL_DATA.optionName() + "' would be ignored: "
                + "it is about the data column of format=raw, and format=" + SinkOption.written(format)
                + " serializes whole rows, which are never null");
        }
    }

    /** @return the constant partition key, checked, or null */
    static String defaultPartition(GivenOptions given) {
        String defaultPartition = given.value(SinkOption.DEFAULT_PARTITION);
        if (defaultPartition != null) {
            try {
                RecordRules.checkPartitionKey(defaultPartition);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid value for option '" + SinkOption.DEFAULT_PARTITION.optionName()
                    + "' (" + SinkOption.DEFAULT_PARTITION.confKey() + "): " + e.getMessage(), e);
            }
        }
        return defaultPartition;
    }

    /**
     * The KPL fills a PutRecords call up to CollectionMaxSize, counting partition keys as Kinesis does; a
     * record larger than it goes alone, so large records never need it raised.
     */
    static void checkCollectionMaxSize(KinesisProducerConfiguration kplConfig) {
        long size = kplConfig.getCollectionMaxSize();
        if (size > KINESIS_MAX_CALL_BYTES) {
            throw new IllegalArgumentException("KPL property 'CollectionMaxSize' (" + size + ") is over the "
                + KINESIS_MAX_CALL_BYTES + " bytes (10 MiB) Kinesis takes in one PutRecords call, partition keys "
                + "included: Kinesis refuses a larger call whole, and the KPL would retry it until RecordTtl. A record "
                + "larger than CollectionMaxSize is sent alone in its call, so records up to 10 MiB do not need it raised");
        }
    }

    static void checkExecutorAggregation(GivenOptions given, int aggregateMaxBytes, long maxRecordBytes) {
        for (String property : KplDerivation.EXECUTOR_AGGREGATION_PROPERTIES) {
            if (given.givenKpl(property)) {
                throw new IllegalArgumentException("KPL property '" + property + "' cannot be set with "
                    + SinkOption.AGGREGATION.optionName() + "=executor: the sink sets it (AggregationEnabled=true, "
                    + "AggregationMaxCount=1) so that the KPL sends each of the task's aggregates as it is; size them "
                    + "with AggregationMaxSize");
            }
        }
        long largest = KplDerivation.largestAggregate(maxRecordBytes);
        if (aggregateMaxBytes > largest) {
            throw new IllegalArgumentException("KPL property 'AggregationMaxSize' (" + aggregateMaxBytes + ") is over "
                + "what one Kinesis record holds with " + SinkOption.AGGREGATION.optionName() + "=executor: at most "
                + largest + ", " + SinkOption.MAX_RECORD_BYTES.optionName() + "=" + maxRecordBytes + " less the "
                + "aggregate's partition key '" + KinesisRecord.AGGREGATE_PARTITION_KEY + "' (Kinesis counts data plus "
                + "partition key)");
        }
    }
}
