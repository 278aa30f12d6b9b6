package sparkkpl.aggregation;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import sparkkpl.config.WriteConfig;
import sparkkpl.producer.KinesisRecord;
import sparkkpl.producer.KplRecord;
import sparkkpl.producer.RecordGrouping;
import sparkkpl.producer.TaskRecord;

/**
 * Groups one task's records into aggregates that a KCL consumer never drops: every sub-record of an
 * aggregate routes to the shard the aggregate is sent to.
 *
 * <p>Records whose keys are the user's (a partitionKey column, an explicit hash key) are grouped per
 * target shard, looked up in the stream's {@link ShardMap}. Records whose key the sink chooses
 * itself (partitioner {@code random}, {@code fixed}, or a constant {@code defaultPartition}) need no
 * shard map: every record of an aggregate takes the aggregate's key, the key of its first record, so
 * all of them route wherever that key routes, before and after any resharding. With {@code random}
 * that spreads aggregates, rather than single records, evenly over the shards; {@code fixed} and a
 * constant key are one key per task already.
 *
 * <p>An aggregate is sealed when the next record would take it over the size limit, and by
 * {@link #sealAll} when the task sends what it holds (before waiting for room, and at commit), so a
 * small streaming micro-batch is never held back. An aggregate of a single record is sent as that
 * record. It is sent with the partition key {@code "a"} and its first record's effective hash key,
 * as the KPL sends its own aggregates.
 */
public final class ShardAggregator implements RecordGrouping {
    /** The outer partition key: one character, as it counts against Kinesis's record and call limits. */
    static final String AGGREGATE_PARTITION_KEY = "a";

    /** Where an open aggregate goes: a stream's shard, or (sink-chosen keys) the stream alone. */
    private record Target(String stream, String shardId) {}

    private static final class Open {
        final AggregateBuilder builder;
        final List<TaskRecord> records = new ArrayList<>();
        BigInteger firstHashKey;

        Open(int maxBytes) {
            builder = new AggregateBuilder(maxBytes);
        }
    }

    private final WriteConfig config;
    private final int maxBytes;
    private final boolean sinkChoosesKeys;
    private final Map<Target, Open> open = new LinkedHashMap<>();

    /**
     * @param maxBytes the largest aggregate, as the KPL counts its own against AggregationMaxSize
     * @param sinkChoosesKeys whether the partitioner makes the keys (random, fixed, a constant)
     */
    public ShardAggregator(WriteConfig config, int maxBytes, boolean sinkChoosesKeys) {
        this.config = config;
        this.maxBytes = maxBytes;
        this.sinkChoosesKeys = sinkChoosesKeys;
    }

    @Override
    public void add(TaskRecord taskRecord, Consumer<KplRecord> ready) throws IOException {
        KinesisRecord record = taskRecord.record();
        boolean ownKey = sinkChoosesKeys && record.explicitHashKey() == null;
        Target target = ownKey ? new Target(record.stream(), null) : new Target(record.stream(), shardOf(record));
        Open aggregate = open.computeIfAbsent(target, t -> new Open(maxBytes));
        TaskRecord joining = ownKey && !aggregate.records.isEmpty()
            ? withKey(taskRecord, aggregate.records.get(0).record().partitionKey()) : taskRecord;
        if (!tryAdd(aggregate, joining)) {
            ready.accept(seal(aggregate));
            tryAdd(aggregate, taskRecord); // the next aggregate starts with the record's own key
        }
    }

    private static boolean tryAdd(Open aggregate, TaskRecord taskRecord) {
        KinesisRecord record = taskRecord.record();
        if (!aggregate.builder.tryAdd(record.partitionKey(), record.explicitHashKey(), record.data())) {
            return false;
        }
        if (aggregate.records.isEmpty()) {
            aggregate.firstHashKey = HashKeys.effective(record.partitionKey(), record.explicitHashKey());
        }
        aggregate.records.add(taskRecord);
        return true;
    }

    private static TaskRecord withKey(TaskRecord taskRecord, String partitionKey) {
        KinesisRecord record = taskRecord.record();
        return new TaskRecord(new KinesisRecord(record.stream(), partitionKey, null, record.data()),
            taskRecord.rowNumber(), taskRecord.size());
    }

    /** The id of the open shard the record routes to, listing the stream again if none holds its key. */
    private String shardOf(KinesisRecord record) throws IOException {
        BigInteger hashKey = HashKeys.effective(record.partitionKey(), record.explicitHashKey());
        ShardMap map = ShardMaps.current(config, record.stream());
        ShardMap.Shard shard = map.shardFor(hashKey);
        if (shard == null) {
            shard = ShardMaps.reload(config, record.stream(), map).shardFor(hashKey);
        }
        if (shard == null) {
            throw new IOException("No open shard of stream '" + record.stream() + "' holds hash key " + hashKey
                + " (of partition key '" + record.partitionKey() + "'), even after listing its shards again");
        }
        return shard.id();
    }

    @Override
    public void sealAll(Consumer<KplRecord> ready) {
        for (Open aggregate : open.values()) {
            if (!aggregate.records.isEmpty()) {
                ready.accept(seal(aggregate));
            }
        }
        open.clear();
    }

    private static KplRecord seal(Open aggregate) {
        List<TaskRecord> records = List.copyOf(aggregate.records);
        aggregate.records.clear();
        if (records.size() == 1) {
            aggregate.builder.clear();
            return KplRecord.alone(records.get(0));
        }
        String stream = records.get(0).record().stream();
        KinesisRecord sent = new KinesisRecord(stream, AGGREGATE_PARTITION_KEY, aggregate.firstHashKey.toString(),
            aggregate.builder.build());
        return new KplRecord(sent, records);
    }
}
