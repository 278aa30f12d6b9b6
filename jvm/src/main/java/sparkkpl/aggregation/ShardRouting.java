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
 * hot key's shard then holds what it takes in the target wait, not the whole stream's worth. A key the sink
 * chooses once for many rows ({@code fixed}, a constant) is placed the same way: every producer writing it
 * must budget that one shard's drain. Random keys spread over the stream and stay in the stream's lane,
 * without a listing, as do the records of a stream the task cannot list.
 */
public final class ShardRouting extends RecordGrouping.EachAlone {
    private final ShardRouter router;
    private final boolean randomKeys;

    /**
     * @param shardMaps the maps of the producer the task feeds
     * @param randomKeys whether the partitioner draws a random key for each row
     * @param streams the task's streams as described for the write: which incarnation of each to list
     */
    public ShardRouting(ShardMaps shardMaps, boolean randomKeys, RowStreams streams) {
        this.router = new ShardRouter(shardMaps, streams);
        this.randomKeys = randomKeys;
    }

    @Override
    public void add(TaskRecord taskRecord, Consumer<KplRecord> ready) {
        KinesisRecord record = taskRecord.record();
        boolean spread = randomKeys && record.explicitHashKey() == null;
        String shard = spread || router.unlisted(record.stream()) ? null
            : router.shardOf(record, record.partitionKey().getBytes(StandardCharsets.UTF_8));
        ready.accept(KplRecord.alone(taskRecord, shard));
    }
}
