package sparkkpl.producer;

import java.util.List;

/**
 * One user record as handed to the KPL, and the task's records it carries: the record itself, or
 * an aggregate the sink built of several. Kinesis's answer for it is the answer for each of them.
 *
 * @param sent what the KPL gets
 * @param carried the task's records inside, in order; each holds its own room under the queue limit
 */
public record KplRecord(KinesisRecord sent, List<TaskRecord> carried) {
    /** A record that travels as it is. */
    public static KplRecord alone(TaskRecord record) {
        return new KplRecord(record.record(), List.of(record));
    }
}
