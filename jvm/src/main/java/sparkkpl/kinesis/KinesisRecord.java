package sparkkpl.kinesis;

/**
 * One row made into a record, as a consumer reads it back from Kinesis: its stream, partition key,
 * optional explicit hash key ({@code null} when none) and data. The sink's record types build on it:
 * a task's {@code TaskRecord} is one of these with its row number; a {@code KplRecord} carries one or an
 * aggregate of several to the KPL; a {@code FailedRecord} is one that will not arrive.
 */
public record KinesisRecord(String stream, String partitionKey, String explicitHashKey, byte[] data) {
    /**
     * The partition key an aggregate (the KPL's aggregated format) is sent under, as the KPL sends its
     * own: one character, as it counts against Kinesis's record and call limits (its sub-records carry
     * their own keys).
     */
    public static final String AGGREGATE_PARTITION_KEY = "a";

    /**
     * Its size as Kinesis counts it against the record size limit: the data plus the partition
     * key's UTF-8 bytes. The sink's one byte count of a record: maxRecordBytes, the queue limit and
     * bytes_written all use it.
     */
    public long bytes() {
        return data.length + utf8Bytes(partitionKey);
    }

    /** Counted, not encoded: this runs for every row. */
    private static int utf8Bytes(String text) {
        int bytes = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes += 1;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (!Character.isSurrogate(c)) {
                bytes += 3;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                bytes += 4;
                i++;
            } else {
                bytes += 1; // a lone surrogate: Java's UTF-8 encoder writes '?'
            }
        }
        return bytes;
    }
}
