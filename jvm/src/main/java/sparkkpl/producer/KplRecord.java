package sparkkpl.producer;

import java.util.List;

/**
 * One user record as handed to the KPL, and the task's records it carries: the record itself, or
 * an aggregate the sink built of several. Kinesis's answer for it is the answer for each of them.
 *
 * @param sent what the KPL gets
 * @param carried the task's records inside, in order
 * @param bytes their bytes in all, as the queue limit counts them: the room the KPL record holds
 * @param targetShard the shard every record inside routes to, when the aggregate was built from the
 *     stream's shard map; null when it may be stored in any shard (a record alone, or an aggregate
 *     whose records all share one key)
 */
public record KplRecord(KinesisRecord sent, List<TaskRecord> carried, long bytes, String targetShard) {
    /** A record that travels as it is. */
    public static KplRecord alone(TaskRecord record) {
        return new KplRecord(record.record(), List.of(record), record.size(), null);
    }

    /** An aggregate of {@code carried}, built for {@code targetShard} (or null: see the class comment). */
    public static KplRecord aggregate(KinesisRecord sent, List<TaskRecord> carried, String targetShard) {
        long bytes = 0;
        for (TaskRecord record : carried) {
            bytes += record.size();
        }
        return new KplRecord(sent, List.copyOf(carried), bytes, targetShard);
    }

    /** How many task records it carries: the records it holds under the queue limit. */
    public int count() {
        return carried.size();
    }
}
