package sparkkpl.kinesis;

import java.io.Serializable;

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

    public long maxRecordBytes() {
        return (long) maxRecordKib << 10;
    }
}
