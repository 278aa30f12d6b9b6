package sparkkpl.config;

import java.util.List;
import java.util.Map;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.RecordRules;
import sparkkpl.kinesis.StreamArn;

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
    static void implyAggregation(Map<SinkOption, String> sinkOptions, Map<String, String> kpl) {
        if (!sinkOptions.containsKey(SinkOption.AGGREGATION)
                && KplDerivation.KPL_AGGREGATION_SHAPERS.stream().anyMatch(kpl::containsKey)) {
            sinkOptions.put(SinkOption.AGGREGATION, SinkOption.written(Aggregation.KPL));
        }
    }

    /**
     * A stream given by ARN: its name becomes streamName and its region the KPL's Region, which the user may
     * give only as the same; a role assumed for it must be of its account (the KPL sends names only).
     */
    static void applyStreamArn(Map<SinkOption, String> sinkOptions, Map<String, String> kpl) {
        String text = sinkOptions.get(SinkOption.STREAM_ARN);
        if (text == null) {
            return;
        }
        StreamArn arn;
        try {
            arn = StreamArn.parse(text);
        } catch (IllegalArgumentException e) {
            throw SinkOption.STREAM_ARN.invalid(StreamArn.FORM, text);
        }
        String name = sinkOptions.get(SinkOption.STREAM_NAME);
        if (name != null && !name.equals(arn.name())) {
            throw new IllegalArgumentException("Options '" + SinkOption.STREAM_NAME.optionName() + "' ('" + name
                + "') and '" + SinkOption.STREAM_ARN.optionName() + "' ('" + text + "') name different streams: give one");
        }
        String region = kpl.get(KplProperties.REGION);
        if (region != null && !region.equals(arn.region())) {
            throw new IllegalArgumentException("KPL property '" + KplProperties.REGION + "' (" + region + ") disagrees "
                + "with the region of option '" + SinkOption.STREAM_ARN.optionName() + "' (" + arn.region() + ", in '"
                + text + "'): leave Region out, or give the stream's");
        }
        String roleArn = sinkOptions.get(SinkOption.AWS_ROLE_ARN);
        if (roleArn != null && !arn.account().equals(StreamArn.roleAccount(roleArn))) {
            throw new IllegalArgumentException("Option '" + SinkOption.AWS_ROLE_ARN.optionName() + "' ('" + roleArn
                + "') is not a role of account " + arn.account() + ", the account of the stream '"
                + SinkOption.STREAM_ARN.optionName() + "' names: " + StreamArn.CROSS_ACCOUNT_REASON + "; set awsRoleArn to a role in account " + arn.account());
        }
        sinkOptions.put(SinkOption.STREAM_NAME, arn.name());
        kpl.put(KplProperties.REGION, arn.region());
    }

    /** The most bytes (data plus partition key) a record may have. */
    static void checkMaxRecordBytes(GivenOptions given) {
        long value = given.get(SinkOption.MAX_RECORD_BYTES);
        if (value > KplDerivation.KPL_MAX_RECORD_BYTES) {
            throw SinkOption.MAX_RECORD_BYTES.invalid("1 to " + KplDerivation.KPL_MAX_RECORD_BYTES
                + " (10 MiB, the KPL's limit)", String.valueOf(value));
        }
    }

    static void checkDeadLetters(GivenOptions given) {
        boolean failOnError = given.get(SinkOption.FAIL_ON_ERROR);
        if (failOnError && given.get(SinkOption.DEAD_LETTER_PATH) != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "' needs "
                + SinkOption.FAIL_ON_ERROR.optionName() + "=false: with failOnError=true (the default) an undelivered "
                + "record fails the task instead");
        }
    }

    /** A write name is only read into record ids, so without them it would silently do nothing. */
    static void checkWriteName(GivenOptions given) {
        String name = given.get(SinkOption.WRITE_NAME);
        if (name != null && name.isBlank()) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' must name the write, "
                + "got '" + name + "'");
        }
        if (name != null && given.get(SinkOption.RECORD_ID) != RecordId.PREFIX) {
            throw new IllegalArgumentException("Option '" + SinkOption.WRITE_NAME.optionName() + "' names the write in "
                + "record ids: it needs " + SinkOption.RECORD_ID.optionName() + "=prefix");
        }
    }

    /**
     * Key order holds between aggregates the tasks build, one per shard in flight; rows the KPL aggregates,
     * or sends one by one, are ordered by no one.
     */
    static void checkOrdering(GivenOptions given, boolean tasksAggregate) {
        if (given.get(SinkOption.ORDERING) == Ordering.KEY && !tasksAggregate) {
            throw new IllegalArgumentException("Option '" + SinkOption.ORDERING.optionName() + "=key' needs "
                + SinkOption.AGGREGATION.optionName() + "=executor (the default): the tasks' aggregates keep each key's "
                + "rows in order, and the KPL's own aggregation or unaggregated rows (AggregationEnabled=false) would "
                + "let a retried record land after later ones");
        }
    }

    static void checkNullData(GivenOptions given) {
        Format format = given.get(SinkOption.FORMAT);
        if (given.given(SinkOption.NULL_DATA) && format != Format.RAW) {
            throw new IllegalArgumentException("Option '" + SinkOption.NULL_DATA.optionName() + "' would be ignored: "
                + "it is about the data column of format=raw, and format=" + SinkOption.written(format)
                + " serializes whole rows, which are never null");
        }
    }

    /**
     * The registry's header goes first in the data, where a consumer's deserializer looks for it, and describes
     * an Avro row: other formats and a record id in front would leave records it cannot read.
     */
    static void checkSchemaRegistry(GivenOptions given) {
        String registry = SinkOption.SCHEMA_REGISTRY_NAME.optionName();
        if (given.get(SinkOption.SCHEMA_REGISTRY_NAME) == null) {
            for (SinkOption option : List.of(SinkOption.SCHEMA_NAME, SinkOption.SCHEMA_AUTO_REGISTRATION,
                    SinkOption.SCHEMA_COMPATIBILITY, SinkOption.SCHEMA_COMPRESSION, SinkOption.SCHEMA_REGISTRY_ENDPOINT)) {
                if (given.given(option)) {
                    throw new IllegalArgumentException("Option '" + option.optionName() + "' needs the option '"
                        + registry + "' (" + SinkOption.SCHEMA_REGISTRY_NAME.confKey() + "): without a registry it would be ignored");
                }
            }
            return;
        }
        Format format = given.get(SinkOption.FORMAT);
        if (format != Format.AVRO) {
            throw new IllegalArgumentException("Option '" + registry + "' needs " + SinkOption.FORMAT.optionName()
                + "=avro: the registry's header describes the row in Avro, and format=" + SinkOption.written(format)
                + " writes " + (format == Format.RAW ? "the data column as it is" : "JSON"));
        }
        if (given.get(SinkOption.RECORD_ID) == RecordId.PREFIX) {
            throw new IllegalArgumentException("Option '" + registry + "' cannot be used with "
                + SinkOption.RECORD_ID.optionName() + "=prefix: the record id would stand before the registry's header, "
                + "where the registry's deserializer expects the header");
        }
        if (given.given(SinkOption.SCHEMA_COMPATIBILITY) && !given.<Boolean>get(SinkOption.SCHEMA_AUTO_REGISTRATION)) {
            throw new IllegalArgumentException("Option '" + SinkOption.SCHEMA_COMPATIBILITY.optionName() + "' is the mode "
                + "of a schema the sink creates: it needs " + SinkOption.SCHEMA_AUTO_REGISTRATION.optionName() + "=true");
        }
    }

    static void checkDefaultPartition(GivenOptions given) {
        String defaultPartition = given.get(SinkOption.DEFAULT_PARTITION);
        if (defaultPartition != null) {
            try {
                RecordRules.checkPartitionKey(defaultPartition);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid value for option '" + SinkOption.DEFAULT_PARTITION.optionName()
                    + "' (" + SinkOption.DEFAULT_PARTITION.confKey() + "): " + e.getMessage(), e);
            }
        }
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
