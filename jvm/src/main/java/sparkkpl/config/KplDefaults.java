package sparkkpl.config;

import java.util.Map;
import java.util.Set;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import software.amazon.kinesis.producer.KinesisProducerConfiguration.RecordDistributionStrategyDefault;

/** The KPL properties the sink sets itself when the user gives none, and why. */
public final class KplDefaults {
    static final String LOG_LEVEL = "LogLevel";
    static final String RECORD_MAX_BUFFERED_TIME = "RecordMaxBufferedTime";
    static final String DISTRIBUTION_DEFAULT = "RecordDistributionStrategyDefault";
    private static final String OLDEST_FUTURE_TRACKER = "EnableOldestFutureTracker";
    static final String METRICS_LEVEL = "MetricsLevel";
    /** No CloudWatch upload by the KPL unless asked for: see docs/design-decisions.md. */
    private static final String METRICS_OFF = "none";
    /**
     * The KPL's RecordMaxBufferedTime for a producer of the tasks' aggregates: how long the daemon
     * gathers records into a PutRecords call.
     */
    static final long EXECUTOR_AGGREGATES_BUFFERED_MS = 10;
    /** The daemon's log level: its warnings are per request and not the user's to act on. */
    private static final String QUIET_LOG_LEVEL = "error";
    /** What the config example says beside the KPL's own default. */
    public static final Map<String, String> SHOWN = Map.of(
        RECORD_MAX_BUFFERED_TIME, EXECUTOR_AGGREGATES_BUFFERED_MS + " with aggregation=executor",
        DISTRIBUTION_DEFAULT, RecordDistributionStrategyDefault.USER_PARTITION_KEY.name(),
        LOG_LEVEL, QUIET_LOG_LEVEL,
        METRICS_LEVEL, METRICS_OFF);

    private KplDefaults() {}

    /**
     * {@code kpl} with the sink's choice for each property the user did not give.
     *
     * @param given the properties the user (or the sink's own options) set
     * @param tasksAggregate whether the tasks build the aggregates (aggregation=executor)
     */
    static KinesisProducerConfiguration applied(KinesisProducerConfiguration kpl, Set<String> given,
                                                boolean tasksAggregate) {
        // The KPL leaves a future it lost (e.g. a duplicate result after a retried request)
        // pending forever unless told to time it out; past its TTL a record cannot succeed anyway.
        if (kpl.getUserRecordTimeoutInMillis() == 0) {
            kpl.setUserRecordTimeoutInMillis(lostRecordTimeoutMs(kpl));
        }
        // The KPL (1.0.9, unchanged in 1.1.1) keeps every outstanding record in a heap only to log
        // the oldest one, and removes each acknowledged record by a linear scan: at a 100,000-record
        // queue limit that halves throughput. Off unless asked for.
        if (!given.contains(OLDEST_FUTURE_TRACKER)) {
            kpl.setEnableOldestFutureTracker(false);
        }
        // KPL 1.1's daemon otherwise describes each stream on its first record, once per executor, and
        // sends what arrives meanwhile as if Kinesis placed it (aggregates without their explicit hash
        // key, stored in the wrong shard). The driver's look (or, for a stream only rows name, the
        // executor's) has the answer; an AUTO stream's producer carries it as a property
        // (AutoStreams), every other stream places by key.
        if (!given.contains(DISTRIBUTION_DEFAULT)) {
            kpl.setRecordDistributionStrategyDefault(RecordDistributionStrategyDefault.USER_PARTITION_KEY);
        }
        // The tasks' aggregates are complete when the KPL gets them, so its buffering only gathers them
        // into PutRecords calls; but it holds the last ones of every task, at commit, for the whole
        // RecordMaxBufferedTime (100 ms; a flush sends them 80 ms later), which every streaming
        // micro-batch waited out. The tasks still seal open aggregates by age at the user's value.
        if (tasksAggregate && !given.contains(RECORD_MAX_BUFFERED_TIME)) {
            kpl.setRecordMaxBufferedTime(EXECUTOR_AGGREGATES_BUFFERED_MS);
        }
        if (!given.contains(LOG_LEVEL)) {
            kpl.setLogLevel(QUIET_LOG_LEVEL);
        }
        // The KPL's own default (detailed, per shard) calls cloudwatch:PutMetricData, which the documented
        // policy does not grant, and is billed as custom metrics per shard; the sink's metrics are the view.
        if (!given.contains(METRICS_LEVEL)) {
            kpl.setMetricsLevel(METRICS_OFF);
        }
        return kpl;
    }

    /** A record's TTL, plus its last request's time, plus a margin for a slow callback. */
    static long lostRecordTimeoutMs(KinesisProducerConfiguration kpl) {
        long margin = 2 * kpl.getRequestTimeout() + 30_000;
        return kpl.getRecordTtl() > Long.MAX_VALUE - margin ? Long.MAX_VALUE : kpl.getRecordTtl() + margin;
    }
}
