package sparkkpl.config;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import software.amazon.kinesis.producer.KinesisProducerConfiguration.RecordDistributionStrategyDefault;
import sparkkpl.kinesis.KinesisRecord;

/**
 * The KPL properties the sink derives from its own options: the record size it checks, the KPL's
 * aggregation as the tasks' aggregates need it, the largest aggregate, and what a stream that places
 * records itself (AUTO) needs.
 */
public final class KplDerivation {
    /** KinesisProducerConfiguration.setMaxUserRecordSize accepts up to 10 MiB (KPL 1.0.6+). */
    static final long KPL_MAX_RECORD_BYTES = 10L << 20;
    /** ... and no less than 64 bytes. */
    private static final long KPL_MIN_RECORD_BYTES = 64;
    static final String KPL_MAX_RECORD_SIZE = KplProperties.MAX_USER_RECORD_SIZE;
    static final String KPL_AGGREGATION_ENABLED = "AggregationEnabled";
    private static final String KPL_AGGREGATION_MAX_COUNT = "AggregationMaxCount";
    /** The KPL properties whose presence makes an unset aggregation mode kpl: the user shapes the KPL's own. */
    public static final Set<String> KPL_AGGREGATION_SHAPERS = Set.of(KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT);
    /** The KPL properties the sink sets for aggregation=executor, so refuses from the user. */
    static final List<String> EXECUTOR_AGGREGATION_PROPERTIES = List.of(KPL_AGGREGATION_ENABLED, KPL_AGGREGATION_MAX_COUNT);
    private static final String KPL_AGGREGATION_MAX_SIZE = "AggregationMaxSize";
    static final String KPL_DISTRIBUTION_DEFAULT = KplDefaults.DISTRIBUTION_DEFAULT;
    /** The KPL's per-shard limiter, which only a daemon that predicts shards applies. */
    static final String KPL_RATE_LIMIT = "RateLimit";

    private KplDerivation() {}

    /** The KPL refuses data over its own limit (1 MiB by default): raised to the sink's. */
    static void setMaxRecordSize(TreeMap<String, String> kpl, long maxRecordBytes) {
        kpl.put(KPL_MAX_RECORD_SIZE, String.valueOf(Math.max(KPL_MIN_RECORD_BYTES, maxRecordBytes)));
    }

    /**
     * The tasks' aggregates go to the daemon whole, each with the explicit hash key of the shard it was
     * built for, and the tasks check the shard Kinesis stored it in and pace each shard themselves
     * (their lanes). So the KPL's aggregation, which would predict a shard for each, keep an aggregator
     * and a limiter per shard and poll them all every 25 ms, stays off: at 4,096 shards that work was
     * most of the daemon's CPU (bench/results/kpl-aggregation-off). Only a given {@code RateLimit} turns
     * it on, with a count of one so that it never packs aggregates into aggregates: the KPL's per-shard
     * limiter the user asked for needs its shard prediction. As values of the setters' types: set on
     * the parsed properties, not parsed.
     */
    static Map<String, Object> forExecutorAggregation(boolean rateLimitGiven) {
        return rateLimitGiven ? Map.of(KPL_AGGREGATION_ENABLED, true, KPL_AGGREGATION_MAX_COUNT, 1L)
            : Map.of(KPL_AGGREGATION_ENABLED, false);
    }

    /** One Kinesis record per row, the KPL told the streams are AUTO unless the user said. */
    static Map<String, Object> forAutoStreams(boolean distributionGiven) {
        Map<String, Object> learnt = new TreeMap<>(Map.of(KPL_AGGREGATION_ENABLED, false));
        if (!distributionGiven) {
            learnt.put(KPL_DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.AUTO.name());
        }
        return learnt;
    }

    /**
     * The largest aggregate a task builds: the KPL's AggregationMaxSize if given, else its default or what
     * fits one Kinesis record if smaller, since every aggregate is one record to the KPL. The default (51,200)
     * is two 25 KiB payload units; Kinesis bills the aggregate's one-byte key with it, so the tasks' aggregates
     * stop one byte short of it, never starting a third unit.
     */
    static int aggregateMaxBytes(GivenOptions given, KinesisProducerConfiguration kplConfig, long maxRecordBytes) {
        long size = kplConfig.getAggregationMaxSize();
        return (int) (given.givenKpl(KPL_AGGREGATION_MAX_SIZE) ? size
            : Math.min(size - KinesisRecord.AGGREGATE_PARTITION_KEY.length(), largestAggregate(maxRecordBytes)));
    }

    /**
     * The most bytes an aggregate may have (counted as the KPL counts AggregationMaxSize) so that
     * Kinesis takes it: Kinesis counts a record's data plus its partition key, and an aggregate
     * travels under its own one-byte key.
     */
    static long largestAggregate(long maxRecordBytes) {
        return maxRecordBytes - KinesisRecord.AGGREGATE_PARTITION_KEY.length(); // ASCII: one byte a character
    }
}
