package sparkkpl.producer;

import java.util.ArrayList;
import java.util.List;
import sparkkpl.kinesis.KinesisRecord;

/**
 * What a task hands the KPL as one of the KPL's user records, and the task's records it carries: one
 * {@link TaskRecord} alone, or an aggregate the task built of several. Kinesis's answer for it is the
 * answer for each of them.
 *
 * <p>While outstanding, an aggregate keeps its own bytes and its records' row numbers only, not the
 * records: they are read back from the bytes on the rare paths that need them again (a failure, a
 * refusal, a reshard). So the queue holds each record's data once, and a 100-byte record costs the
 * heap about 8 bytes beside it instead of four objects, which the garbage collector would otherwise
 * copy at every pause while Kinesis has not answered yet.
 */
public final class KplRecord {
    /** Reads an aggregate's user records back out of its bytes, in the order they were added. */
    @FunctionalInterface
    public interface Unpacker {
        List<KinesisRecord> records(KinesisRecord aggregate);
    }

    private final KinesisRecord sent;
    private final long[] rowNumbers;
    private final long bytes;
    private final String targetShard;
    private final Lane lane;
    /** Null when {@link #sent} is the task's record itself. */
    private final Unpacker unpacker;

    private KplRecord(KinesisRecord sent, long[] rowNumbers, long bytes, String targetShard, String laneShard,
                      Unpacker unpacker) {
        this.sent = sent;
        this.rowNumbers = rowNumbers;
        this.bytes = bytes;
        this.targetShard = targetShard;
        this.lane = new Lane(sent.stream(), laneShard);
        this.unpacker = unpacker;
    }

    /** A record that travels as it is, to a shard its task does not know. */
    public static KplRecord alone(TaskRecord record) {
        return alone(record, null);
    }

    /**
     * A record that travels as it is, to {@code shard} by its task's shard map (null: not known). The shard
     * only places it in a lane of the queue limit; nothing checks where Kinesis stores it.
     */
    public static KplRecord alone(TaskRecord record, String shard) {
        return new KplRecord(record.record(), new long[] {record.rowNumber()}, record.size(), null, shard, null);
    }

    /**
     * An aggregate of the task records in rows {@code rowNumbers}, built for {@code targetShard}.
     *
     * @param bytes their bytes in all, as the queue limit counts them ({@link KinesisRecord#bytes})
     * @param targetShard the shard every record inside routes to, when the aggregate was built from the
     *     stream's shard map; null when it may be stored in any shard (its records all share one key)
     */
    public static KplRecord aggregate(KinesisRecord sent, long[] rowNumbers, long bytes, String targetShard,
                                      Unpacker unpacker) {
        return new KplRecord(sent, rowNumbers, bytes, targetShard, targetShard, unpacker);
    }

    /**
     * An aggregate whose records all share one key, which may be stored in any shard, waiting in the lane of
     * {@code laneShard}: where that key routes by its task's map (null: not known).
     */
    public static KplRecord aggregateOfOneKey(KinesisRecord sent, long[] rowNumbers, long bytes, String laneShard,
                                              Unpacker unpacker) {
        return new KplRecord(sent, rowNumbers, bytes, null, laneShard, unpacker);
    }

    /** What the KPL gets. */
    public KinesisRecord sent() {
        return sent;
    }

    /** The bytes of the task records inside, as the queue limit counts them: the room it holds. */
    public long bytes() {
        return bytes;
    }

    /** The shard an aggregate was built for; null for a record alone or one that may go anywhere. */
    public String targetShard() {
        return targetShard;
    }

    /** The lane of the queue limit it waits and counts in. */
    public Lane lane() {
        return lane;
    }

    /** How many task records it carries: the records it holds under the queue limit. */
    public int count() {
        return rowNumbers.length;
    }

    /** The task's records inside, in order. */
    public List<TaskRecord> carried() {
        if (unpacker == null) {
            return List.of(new TaskRecord(sent, rowNumbers[0], bytes));
        }
        List<KinesisRecord> records = unpacker.records(sent);
        if (records.size() != rowNumbers.length) {
            throw new IllegalStateException("an aggregate of " + rowNumbers.length + " rows read back as "
                + records.size() + " records");
        }
        List<TaskRecord> carried = new ArrayList<>(records.size());
        for (int i = 0; i < rowNumbers.length; i++) {
            KinesisRecord record = records.get(i);
            carried.add(new TaskRecord(record, rowNumbers[i], record.bytes()));
        }
        return carried;
    }
}
