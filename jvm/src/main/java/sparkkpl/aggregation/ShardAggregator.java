package sparkkpl.aggregation;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.HashKey;
import sparkkpl.kinesis.HashKeys;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.ShardMap;
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
 * constant key are one key per task already, and their aggregates wait in the lane of the shard that key
 * routes to now, for the queue limit's budget; random keys' wait in the stream's lane, with no listing.
 *
 * <p>An aggregate is sealed when the next record would take it over the size limit, and by
 * {@link #sealAll} at commit, so a small streaming micro-batch is never held back. Waiting for room
 * under the queue limit does not seal it: open aggregates hold no room. An aggregate of a single
 * record is sent as that record. It is sent with the partition key {@code "a"} and its first
 * record's effective hash key, as the KPL sends its own aggregates.
 *
 * <p>When the stream is resharded mid-write, an aggregate built for a shard that has closed is
 * stored in one of its children, where a KCL consumer drops it if any record inside belongs to
 * another. {@link #keptWhereStored} tells, from the stream's map listed again, and the task sends
 * such an aggregate's records again, grouped by the new map.
 */
public final class ShardAggregator implements RecordGrouping {
    private static final Logger LOG = LoggerFactory.getLogger(ShardAggregator.class);

    /** Where an open aggregate goes: a stream's shard, or (sink-chosen keys) the stream alone. */
    private record Target(String stream, String shardId) {}

    /** An aggregate being filled: its bytes are in the builder; of its records only what the queue needs. */
    private static final class Open {
        final AggregateBuilder builder;
        /** The first record, which travels as it is if no other joins it. */
        TaskRecord first;
        /** The first record's partition key, UTF-8: with sink-chosen keys, every record's. */
        byte[] firstKey;
        HashKey firstHashKey;
        long[] rowNumbers = new long[64];
        int count;
        long bytes;
        /** The aggregator's look ({@link #sealAged}) after which its first record came. */
        long openedAt;

        Open(int maxBytes) {
            builder = new AggregateBuilder(maxBytes);
        }

        boolean isEmpty() {
            return count == 0;
        }

        /** @param look the aggregator's looks so far: its age is counted in them */
        void added(TaskRecord record, byte[] partitionKey, long look) {
            if (count == 0) {
                first = record;
                firstKey = partitionKey;
                openedAt = look;
            }
            if (count == rowNumbers.length) {
                rowNumbers = Arrays.copyOf(rowNumbers, 2 * count);
            }
            rowNumbers[count++] = record.rowNumber();
            bytes += record.size();
        }

        /** Empties it for the next aggregate; the builder is emptied by building or clearing it. */
        void reset() {
            first = null;
            firstKey = null;
            firstHashKey = null;
            count = 0;
            bytes = 0;
        }
    }

    /**
     * The most bytes a task keeps in open aggregates, so that a stream of thousands of shards does
     * not hold an aggregate's worth per shard in every task: past it the fullest leave early, until
     * {@link #OPEN_BYTES_AFTER_SEALING} are left.
     */
    static final long MAX_OPEN_BYTES = 16L << 20;
    /**
     * What the fullest aggregates are sealed down to past the cap: a quarter of the cap's worth of
     * rows passes before the next look over every open aggregate (one per shard), so that the look
     * costs little per row at thousands of shards (sealing one at a time looked at all of them for
     * every aggregate it sealed).
     */
    static final long OPEN_BYTES_AFTER_SEALING = MAX_OPEN_BYTES / 4 * 3;

    /**
     * Kinesis bills a provisioned stream's writes in payload units of 25 KiB, at least one a record, counting
     * data plus partition key. Near the cap an aggregate is sealed where it would cross into a unit it could
     * not fill: the cap seals it soon anyway, and just past a unit's edge it would be billed a whole unit more.
     */
    static final int PAYLOAD_UNIT_BYTES = 25 * 1024;

    /**
     * The most heap a task's builders keep for reuse: a builder that would take them past it gives its
     * buffers back once sealed. Kept, they stay in the old generation for the task's life instead of
     * being grown again for every aggregate; doubling makes them up to twice what they hold.
     */
    static final long MAX_BUILDER_BYTES = 2 * MAX_OPEN_BYTES;

    /**
     * About the most aggregates a task seals by age at one look. The KPL costs a fixed amount of CPU per
     * record it takes, whatever its size: sealing an aggregate per shard at every look
     * (RecordMaxBufferedTime) asked it, at thousands of shards, for one record of a few rows per shard
     * and look, and the sink's rate fell with them (docs/performance.md, "Figures behind the code's
     * choices"). Past this many targets
     * an aggregate stays open for proportionally more looks, so that a task hands the KPL at most
     * about this many per look by age, and a sparse row waits that much longer in the executor.
     */
    static final int AGED_SEALS_PER_LOOK = 100;

    /** The largest aggregate, as the KPL counts its own against AggregationMaxSize. */
    private final int aggregateMaxBytes;
    /** The queue limits: an aggregate takes its room at once, so it carries no more than they allow. */
    private final long queueLimit;
    private final long queueLimitBytes;
    private final boolean sinkChoosesKeys;
    private final boolean randomKeys;
    /** Which shard each record routes to, by its stream's map. */
    private final ShardRouter router;
    private final Map<Target, Open> open = new LinkedHashMap<>();
    private long openBytes;
    /** The heap the open aggregates' builders take, filled or not ({@link AggregateBuilder#capacityBytes}). */
    private long builderBytes;
    /** How many times {@link #sealAged} looked. */
    private long looks;

    /**
     * @param shardMaps the maps of the producer the task feeds
     * @param queueLimit the producer's cap on records outstanding (queueLimit), which one aggregate stays within
     * @param queueLimitBytes the same for bytes (queueLimitBytes)
     * @param aggregateMaxBytes the largest aggregate, as the KPL counts its own against AggregationMaxSize
     * @param sinkChoosesKeys whether the partitioner makes the keys (random, fixed, a constant)
     * @param randomKeys whether it draws each at random: the aggregates spread over the stream, in its lane
     * @param streams the task's streams as the driver, or for a stream only rows name the JVM, described
     *     them (a stream whose creation time is not known is listed by name alone). Records of a stream
     *     that does not place them by key never come here.
     */
    public ShardAggregator(ShardMaps shardMaps, long queueLimit, long queueLimitBytes, int aggregateMaxBytes,
                           boolean sinkChoosesKeys, boolean randomKeys, RowStreams streams) {
        this.router = new ShardRouter(shardMaps, streams);
        this.aggregateMaxBytes = aggregateMaxBytes;
        this.queueLimit = queueLimit;
        this.queueLimitBytes = queueLimitBytes;
        this.sinkChoosesKeys = sinkChoosesKeys;
        this.randomKeys = randomKeys;
    }

    @Override
    public void add(TaskRecord taskRecord, Consumer<KplRecord> ready) {
        KinesisRecord record = taskRecord.record();
        if (router.unlisted(record.stream())) {
            ready.accept(KplRecord.alone(taskRecord));
            return;
        }
        boolean ownKey = sinkChoosesKeys && record.explicitHashKey() == null;
        byte[] partitionKey = record.partitionKey().getBytes(StandardCharsets.UTF_8); // once: hashed and written
        String shard = ownKey ? null : router.shardOf(record, partitionKey);
        if (!ownKey && shard == null) {
            ready.accept(KplRecord.alone(taskRecord));
            return;
        }
        Target target = new Target(record.stream(), shard);
        Open aggregate = open.get(target);
        if (aggregate == null) { // not computeIfAbsent: its lambda would be an object per row
            aggregate = new Open(aggregateMaxBytes);
            open.put(target, aggregate);
        }
        // Sink-chosen keys: the whole aggregate goes under its first record's key.
        byte[] key = ownKey && !aggregate.isEmpty() ? aggregate.firstKey : partitionKey;
        if (!tryAdd(aggregate, taskRecord, key)) {
            ready.accept(seal(target, aggregate));
            tryAdd(aggregate, taskRecord, partitionKey); // the next aggregate starts with the record's own key
        }
        if (openBytes > MAX_OPEN_BYTES) {
            sealFullest(ready);
        }
    }

    /** @param partitionKey UTF-8; when the aggregate is empty, the record's own key */
    private boolean tryAdd(Open aggregate, TaskRecord taskRecord, byte[] partitionKey) {
        KinesisRecord record = taskRecord.record();
        if (!aggregate.isEmpty()
                && (aggregate.count >= queueLimit || aggregate.bytes + taskRecord.size() > queueLimitBytes)) {
            return false;
        }
        // An empty aggregate counts nothing, so that sealing one takes back exactly what it added.
        int before = aggregate.isEmpty() ? 0 : aggregate.builder.sizeBytes();
        int capacityBefore = aggregate.builder.capacityBytes();
        if (!aggregate.builder.tryAdd(partitionKey, record.explicitHashKey(), record.data(), limitNow(aggregate))) {
            return false;
        }
        openBytes += aggregate.builder.sizeBytes() - before;
        builderBytes += aggregate.builder.capacityBytes() - capacityBefore;
        if (aggregate.isEmpty()) {
            aggregate.firstHashKey = HashKeys.effective(partitionKey, record.explicitHashKey());
        }
        aggregate.added(taskRecord, partitionKey, looks);
        return true;
    }

    /**
     * How large the aggregate may grow now: its limit, or, while the cap binds (the task's targets would hold more
     * than the cap at full size) and its open aggregates are within a quarter cap of it, the edge of the payload
     * unit the aggregate has reached (counting its key). Where the cap cannot bind, aggregates fill.
     */
    private int limitNow(Open aggregate) {
        if (openBytes <= OPEN_BYTES_AFTER_SEALING || aggregate.isEmpty()
                || (long) open.size() * aggregateMaxBytes <= MAX_OPEN_BYTES) {
            return aggregateMaxBytes;
        }
        int key = KinesisRecord.AGGREGATE_PARTITION_KEY.length();
        int unitsReached = (aggregate.builder.sizeBytes() + key + PAYLOAD_UNIT_BYTES - 1) / PAYLOAD_UNIT_BYTES;
        return unitsReached * PAYLOAD_UNIT_BYTES - key;
    }

    private void sealFullest(Consumer<KplRecord> ready) {
        List<Map.Entry<Target, Open>> fullestFirst = new ArrayList<>(open.entrySet());
        fullestFirst.sort(Comparator.comparingInt(
            (Map.Entry<Target, Open> entry) -> entry.getValue().builder.sizeBytes()).reversed());
        for (Map.Entry<Target, Open> entry : fullestFirst) {
            if (openBytes <= OPEN_BYTES_AFTER_SEALING) {
                break;
            }
            ready.accept(seal(entry.getKey(), entry.getValue()));
        }
    }

    @Override
    public void sealAll(Consumer<KplRecord> ready) {
        for (Map.Entry<Target, Open> entry : open.entrySet()) {
            if (!entry.getValue().isEmpty()) {
                ready.accept(seal(entry.getKey(), entry.getValue()));
            }
        }
        clear();
    }

    /**
     * Seals the aggregates that have been open a whole interval between looks, or, when the task has
     * more than {@link #AGED_SEALS_PER_LOOK} targets, as many intervals as it has that many targets.
     */
    @Override
    public void sealAged(Consumer<KplRecord> ready) {
        long looksOpen = Math.max(1, open.size() / AGED_SEALS_PER_LOOK);
        for (Map.Entry<Target, Open> entry : open.entrySet()) {
            Open aggregate = entry.getValue();
            if (!aggregate.isEmpty() && looks - aggregate.openedAt >= looksOpen) {
                ready.accept(seal(entry.getKey(), aggregate));
            }
        }
        looks++;
    }

    @Override
    public void clear() {
        open.clear();
        openBytes = 0;
        builderBytes = 0;
    }

    /** The heap this task's builders take now. */
    long builderBytes() {
        return builderBytes;
    }

    private KplRecord seal(Target target, Open aggregate) {
        openBytes -= aggregate.builder.sizeBytes();
        int capacityBefore = aggregate.builder.capacityBytes();
        KplRecord sealed;
        String laneShard = target.shardId() != null ? target.shardId()
            : randomKeys ? null : laneOfOneKey(aggregate);
        if (aggregate.count == 1) {
            aggregate.builder.clear();
            sealed = KplRecord.alone(aggregate.first, laneShard);
        } else {
            KinesisRecord sent = new KinesisRecord(target.stream(), KinesisRecord.AGGREGATE_PARTITION_KEY,
                aggregate.firstHashKey.toString(), aggregate.builder.build());
            long[] rowNumbers = Arrays.copyOf(aggregate.rowNumbers, aggregate.count);
            sealed = target.shardId() != null
                ? KplRecord.aggregate(sent, rowNumbers, aggregate.bytes, target.shardId(), AggregateReader::records)
                : KplRecord.aggregateOfOneKey(sent, rowNumbers, aggregate.bytes, laneShard, AggregateReader::records);
        }
        aggregate.reset();
        if (builderBytes > MAX_BUILDER_BYTES) {
            aggregate.builder.release();
        }
        builderBytes += aggregate.builder.capacityBytes() - capacityBefore;
        return sealed;
    }

    /**
     * The shard an aggregate of one sink-chosen key ({@code fixed}, a constant) goes to now: one hash per
     * aggregate places it in that shard's lane, so that every producer writing that key budgets what the one
     * shard drains, not what the stream does. Null when the stream cannot be listed: the stream's lane.
     */
    private String laneOfOneKey(Open aggregate) {
        return router.laneOf(aggregate.first.record(), aggregate.firstKey);
    }

    /**
     * Whether the records of an aggregate stand where Kinesis stored it: every one lies in the storing
     * shard's range, by a map that knows that shard ({@link ShardRouter#storing}).
     */
    @Override
    public boolean keptWhereStored(KplRecord record, String storedIn, boolean streamWentMissing) throws IOException {
        String stream = record.sent().stream();
        ShardRouter.Storing storing = router.storing(stream, storedIn, streamWentMissing);
        ShardMap.Shard stored = storing.shard();
        boolean kept = stored != null && record.carried().stream().map(TaskRecord::record)
            .allMatch(inside -> stored.contains(HashKeys.effective(inside.partitionKey(), inside.explicitHashKey())));
        LOG.warn("Kinesis stored an aggregate of {} records for shard {} of stream '{}' in shard {} ({}): {}",
            record.count(), record.targetShard(), stream, storedIn,
            storing.streamWentMissing() ? "after the stream went missing" : "the stream was resharded",
            kept ? "every record lies in that shard, so it stands" : "its records are sent again");
        return kept;
    }
}
