package sparkkpl.kinesis;

import java.io.Serializable;
import java.math.BigDecimal;

/**
 * What the driver learned of a stream before a write ({@code DescribeStreamSummary}), shipped to the
 * executors with the write.
 *
 * @param created the stream's creation time as Kinesis wrote it (epoch seconds): two streams of one
 *     name, one deleted and the other created since, differ in it, and ListShards takes it back; null
 *     when the endpoint does not say (an emulator): the stream is then listed by name
 * @param distribution the record distribution strategy: null (provisioned streams have none),
 *     {@code USER_PARTITION_KEY}, or {@code AUTO}
 * @param maxRecordKib the largest record the stream takes, data plus partition key, in KiB
 */
public record StreamDescription(String stream, String created, String distribution, int maxRecordKib)
        implements Serializable {
    /** A stream's maximum record size unless raised with UpdateMaxRecordSize. */
    public static final int DEFAULT_MAX_RECORD_KIB = 1024;

    /**
     * Whether Kinesis places the stream's records itself, ignoring partition and explicit hash keys:
     * an aggregate then lands in any shard, where a KCL consumer drops the records outside its range.
     */
    public boolean keysIgnored() {
        return "AUTO".equals(distribution);
    }

    /**
     * Whether creation time {@code created} is later than {@code other} (both as Kinesis wrote them, epoch
     * seconds): of two streams of one name, the one created later is the one that has the name now.
     * Times that are not numbers count as later when they differ.
     */
    public static boolean createdLater(String created, String other) {
        try {
            return new BigDecimal(created).compareTo(new BigDecimal(other)) > 0;
        } catch (NumberFormatException e) {
            return !created.equals(other);
        }
    }

    public long maxRecordBytes() {
        return (long) maxRecordKib << 10;
    }
}
