package sparkkpl.config;

import java.util.TreeMap;

/**
 * A write's variant for streams that place records themselves (record distribution strategy AUTO):
 * Kinesis ignores partition and explicit hash keys there, so an aggregate lands in any shard, where a
 * KCL consumer drops its records. One Kinesis record per row then, and the KPL's aggregation and shard
 * prediction off (with prediction on, the KPL retries every record Kinesis placed elsewhere as "Wrong
 * Shard" until it expires), its daemon told the stream is AUTO.
 */
final class AutoStreams {
    private AutoStreams() {}

    /**
     * The producer for rows that name a stream which places records itself, found by the executors.
     * Another producer than the write's, so that the write's daemon is told every other stream places by
     * key and never describes one itself: it sends what comes before its answer as if Kinesis placed it,
     * some aggregates to the wrong shard.
     *
     * @return null when the user set RecordDistributionStrategyDefault: every row goes as they said
     */
    static ProducerSpec producerFor(GivenOptions given, TreeMap<String, String> learnt) {
        return given.givenKpl(KplDerivation.KPL_DISTRIBUTION_DEFAULT) ? null
            : unaggregated(given, learnt).options().producer();
    }

    /**
     * The write's settings for the AUTO stream {@code stream}.
     *
     * @throws IllegalArgumentException when the user asked for aggregation, naming the stream and option
     */
    static WriteConfig withoutAggregationFor(String stream, GivenOptions given, TreeMap<String, String> learnt,
                                             WriteOptions options) {
        String why = "Stream '" + stream + "' places records itself (its record distribution strategy is AUTO), "
            + "ignoring partition and explicit hash keys, so a KCL consumer drops aggregated records. ";
        boolean tasksAggregate = options.aggregatesInExecutor();
        if (tasksAggregate && given.given(SinkOption.AGGREGATION)) {
            throw new IllegalArgumentException(why + "Option '" + SinkOption.AGGREGATION.optionName() + "=executor' "
                + "cannot be used with it: leave the option out, and the sink sends one Kinesis record per row");
        }
        if (!tasksAggregate && "true".equalsIgnoreCase(given.kpl().getOrDefault(KplDerivation.KPL_AGGREGATION_ENABLED, ""))) {
            throw new IllegalArgumentException(why + "KPL property '" + KplDerivation.KPL_AGGREGATION_ENABLED + "=true' "
                + "cannot be used with it: leave it out, and the sink sends one Kinesis record per row");
        }
        return unaggregated(given, learnt);
    }

    /** These settings with one Kinesis record per row, the KPL told the streams are AUTO unless the user said. */
    private static WriteConfig unaggregated(GivenOptions given, TreeMap<String, String> learnt) {
        TreeMap<String, String> unaggregated = new TreeMap<>(learnt);
        KplDerivation.setForAutoStreams(unaggregated, given);
        return new WriteConfig(given.with(SinkOption.AGGREGATION, SinkOption.written(Aggregation.KPL)), unaggregated);
    }
}
