package sparkkpl.aggregation;

import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.producer.KplRecord;
import sparkkpl.producer.RecordGrouping;
import sparkkpl.producer.TaskRecord;

/**
 * Each record a KPL user record of its own ({@code aggregation=kpl}: the KPL aggregates), placed in the
 * lane of the shard its key routes to, so that the queue limit budgets it by what that shard drains: a
 * hot key's shard then holds what it takes in the target wait, not the whole stream's worth. Records
 * whose key the sink chooses (random, fixed, a constant) spread as their keys do and stay in the
 * stream's lane, as do those of a stream the task cannot list.
 */
public final class ShardRouting extends RecordGrouping.EachAlone {
    private final ShardRouter router;
    private final boolean sinkChoosesKeys;

    /**
     * @param shardMaps the maps of the producer the task feeds
     * @param sinkChoosesKeys whether the partitioner makes the keys (random, fixed, a constant)
     * @param streams the task's streams as described for the write: which incarnation of each to list
     */
    public ShardRouting(ShardMaps shardMaps, boolean sinkChoosesKeys, RowStreams streams) {
        this.router = new ShardRouter(shardMaps, streams);
        this.sinkChoosesKeys = sinkChoosesKeys;
    }

    @Override
    public void add(TaskRecord taskRecord, Consumer<KplRecord> ready) {
        KinesisRecord record = taskRecord.record();
        boolean ownKey = sinkChoosesKeys && record.explicitHashKey() == null;
        String shard = ownKey || router.unlisted(record.stream()) ? null
            : router.shardOf(record, record.partitionKey().getBytes(StandardCharsets.UTF_8));
        ready.accept(KplRecord.alone(taskRecord, shard));
    }
}
