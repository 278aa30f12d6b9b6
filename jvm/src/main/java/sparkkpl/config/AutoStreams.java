package sparkkpl.config;

import java.util.TreeMap;

/**
 * A write's variant for streams that place records themselves (record distribution strategy AUTO):
 * Kinesis ignores partition and explicit hash keys there, so an aggregate lands in any shard, where a
 * KCL consumer drops its records. One Kinesis record per row then, and the KPL's aggregation and shard
 * prediction off (with prediction on, the KPL retries every record Kinesis placed elsewhere as "Wrong
 * Shard" until it expires), its daemon told the stream is AUTO. Decided with the write's own values, so
 * that learning a stream is AUTO parses nothing.
 *
 * @param options the write's values for an AUTO stream; null when they do not parse
 * @param unparsable why they do not parse, thrown when they are needed; else null
 * @param refusal why the write cannot go to an AUTO stream (the user asked for aggregation), or null
 * @param distributionGiven whether the user set RecordDistributionStrategyDefault: every row goes as they said
 */
record AutoStreams(WriteOptions options, IllegalArgumentException unparsable, String refusal,
                   boolean distributionGiven) {

    /**
     * @param given the write's options, as its own values were parsed from them
     * @param own the write's own values
     */
    static AutoStreams of(GivenOptions given, WriteOptions own) {
        boolean distributionGiven = given.givenKpl(KplDerivation.KPL_DISTRIBUTION_DEFAULT);
        try {
            return new AutoStreams(unaggregated(given), null, refusal(given, own), distributionGiven);
        } catch (IllegalArgumentException e) { // fails only a write that meets an AUTO stream
            return new AutoStreams(null, e, refusal(given, own), distributionGiven);
        }
    }

    /** Why the user's settings rule out one Kinesis record per row, or null. */
    private static String refusal(GivenOptions given, WriteOptions own) {
        boolean tasksAggregate = own.aggregatesInExecutor();
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

    /** The write's settings with one Kinesis record per row, the KPL told the streams are AUTO unless the user said. */
    private static WriteOptions unaggregated(GivenOptions given) {
        TreeMap<String, String> learnt = new TreeMap<>();
        KplDerivation.setForAutoStreams(learnt, given);
        return WriteConfig.parse(given.with(SinkOption.AGGREGATION, SinkOption.written(Aggregation.KPL)), learnt);
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
        return parsed();
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
        return distributionGiven ? null : parsed().producer();
    }

    private WriteOptions parsed() {
        if (unparsable != null) {
            throw unparsable;
        }
        return options;
    }
}
