package sparkkpl.config;

import java.util.Map;
import java.util.TreeMap;

/**
 * A write's variant for streams that place records themselves (record distribution strategy AUTO):
 * Kinesis ignores partition and explicit hash keys there, so an aggregate lands in any shard, where a
 * KCL consumer drops its records. One Kinesis record per row then, and the KPL's aggregation and shard
 * prediction off (with prediction on, the KPL retries every record Kinesis placed elsewhere as "Wrong
 * Shard" until it expires), its daemon told the stream is AUTO. Derived from the write's own values, so
 * that neither a resolution nor learning a stream is AUTO parses anything again.
 *
 * @param options the write's values for an AUTO stream
 * @param refusal why the write cannot go to an AUTO stream (the user asked for aggregation), or null
 * @param distributionGiven whether the user set RecordDistributionStrategyDefault: every row goes as they said
 */
record AutoStreams(WriteOptions options, String refusal, boolean distributionGiven) {

    /**
     * @param given the write's options, as its own values were read from them
     * @param own the write's own values
     * @param kpl the KPL properties given, parsed, with the record size the sink sets
     */
    static AutoStreams of(GivenOptions given, WriteOptions own, KplValues kpl) {
        boolean distributionGiven = given.givenKpl(KplDerivation.KPL_DISTRIBUTION_DEFAULT);
        return new AutoStreams(unaggregated(given, own, kpl.with(KplDerivation.forAutoStreams(distributionGiven))),
            refusal(given, own), distributionGiven);
    }

    /** Why the user's settings rule out one Kinesis record per row, or null. */
    private static String refusal(GivenOptions given, WriteOptions own) {
        boolean tasksAggregate = own.aggregating().inExecutor();
        if (own.delivery().inKeyOrder()) {
            return "Option '" + SinkOption.ORDERING.optionName() + "=key' cannot be used with it: a key's rows go to "
                + "any shard there, and only one shard's records are kept in order";
        }
        if (tasksAggregate && given.given(SinkOption.AGGREGATION)) {
            return "Option '" + SinkOption.AGGREGATION.optionName() + "=executor' cannot be used with it: leave the "
                + "option out, and the sink sends one Kinesis record per row";
        }
        if (!tasksAggregate && "true".equalsIgnoreCase(given.kpl().getOrDefault(KplDerivation.KPL_AGGREGATION_ENABLED, ""))) {
            return "KPL property '" + KplDerivation.KPL_AGGREGATION_ENABLED + "=true' cannot be used with it: leave "
                + "it out, and the sink sends one Kinesis record per row";
        }
        return null;
    }

    /** The write's values with aggregation=kpl and the KPL's aggregation off: one Kinesis record per row. */
    private static WriteOptions unaggregated(GivenOptions given, WriteOptions own, KplValues autoKpl) {
        WriteOptions.Aggregating perRow = new WriteOptions.Aggregating(Aggregation.KPL, false,
            own.aggregating().aggregateMaxBytes());
        Map<String, String> settings = new TreeMap<>(ShownSettings.settings(given, autoKpl.asText()));
        settings.put(SinkOption.AGGREGATION.confKey(), SinkOption.written(Aggregation.KPL));
        return new WriteOptions(own.target(), own.delivery(), own.shape(), own.registry(), perRow, own.query(),
            own.producer().unaggregated(autoKpl), own.resultKey(), settings);
    }

    /**
     * The write's values for the AUTO stream {@code stream}.
     *
     * @throws IllegalArgumentException when the user asked for aggregation, naming the stream and option
     */
    WriteOptions forStream(String stream) {
        if (refusal != null) {
            throw new IllegalArgumentException("Stream '" + stream + "' places records itself (its record distribution "
                + "strategy is AUTO), ignoring partition and explicit hash keys, so a KCL consumer drops aggregated "
                + "records. " + refusal);
        }
        return options;
    }

    /**
     * The producer for rows that name a stream which places records itself, found by the executors.
     * Another producer than the write's, so that the write's daemon is told every other stream places by
     * key and never describes one itself: it sends what comes before its answer as if Kinesis placed it,
     * some aggregates to the wrong shard.
     *
     * @return null when {@code distributionGiven}
     */
    ProducerSpec producer() {
        return distributionGiven ? null : options.producer();
    }
}
