package sparkkpl.records;

import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import sparkkpl.config.NullData;
import sparkkpl.config.WriteOptions;
import sparkkpl.failures.FailedRecord;
import sparkkpl.failures.RowRejected;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.RecordRules;
import sparkkpl.kinesis.StreamArn;
import sparkkpl.kinesis.StreamDescription;

/** Turns one row into the Kinesis record it stands for, or says which column makes that impossible. */
public final class RecordAssembler {
    private final RowLayout layout;
    private final Partitioning partitioning;
    private final int sparkPartition;
    /** Null without recordId=prefix. */
    private final RecordIdHeader.Task recordIds;
    /** Null for the raw format, which takes the data column as it is. */
    private final PayloadFormat.Serializer serializer;
    private final String defaultStream;
    private final long maxRecordBytes;
    private final Map<String, StreamDescription> streams;
    /** The smaller of maxRecordBytes and the default stream's own maximum. */
    private final long defaultStreamMaxBytes;
    private final boolean skipNullData;

    /**
     * @param recordIds the task's record ids, or null without recordId=prefix
     * @param streams the streams the driver described, whose own maximum record size holds too
     */
    public RecordAssembler(WriteOptions options, RowLayout layout, PayloadFormat format, Partitioning partitioning,
                           RecordIdHeader.Task recordIds, int sparkPartition, Map<String, StreamDescription> streams) {
        this.layout = layout;
        this.recordIds = recordIds;
        this.serializer = format.serializesRow() ? format.newSerializer(layout.payloadSchema()) : null;
        this.partitioning = partitioning;
        this.sparkPartition = sparkPartition;
        this.defaultStream = options.target().streamName();
        this.maxRecordBytes = options.shape().maxRecordBytes();
        this.streams = streams;
        StreamDescription described = defaultStream == null ? null : streams.get(defaultStream);
        this.defaultStreamMaxBytes = described == null ? maxRecordBytes
            : Math.min(maxRecordBytes, described.maxRecordBytes());
        this.skipNullData = options.shape().nullData() == NullData.SKIP;
    }

    /**
     * @return the record, or null for a row to skip (null data with nullData=skip)
     * @throws RowRejected naming the column at fault, with what is known of the record
     */
    public KinesisRecord assemble(InternalRow row, long rowNumber) throws RowRejected {
        if (skipNullData && layout.dataIsNull(row)) {
            return null;
        }
        String rowStream = layout.streamName(row);
        String arnText = layout.streamArn(row);
        String arnProblem = null;
        if (arnText != null) {
            try {
                StreamArn arn = StreamArn.parse(arnText);
                arnProblem = layout.arnElsewhere(arn);
                if (rowStream != null && !rowStream.equals(arn.name())) {
                    arnProblem = "streamName '" + rowStream + "' and streamArn '" + arnText + "' name different streams";
                }
                rowStream = arn.name();
            } catch (IllegalArgumentException e) {
                arnProblem = e.getMessage();
            }
        }
        String stream = rowStream != null ? rowStream : defaultStream;
        String key = partitioning.key(row, layout, sparkPartition);
        String explicitHashKey = layout.explicitHashKey(row);
        String hashKeyProblem = null;
        if (explicitHashKey != null) {
            try { // canonical before the record id is made of it, so that +5 and 5 name one record
                explicitHashKey = RecordRules.canonicalExplicitHashKey(explicitHashKey);
            } catch (IllegalArgumentException e) {
                hashKeyProblem = e.getMessage();
            }
        }
        KinesisRecord record = new KinesisRecord(stream, key, explicitHashKey, data(row, stream, key, explicitHashKey));
        if (record.data() == null) {
            throw rejected(record, rowNumber, RowLayout.DATA, "NullData",
                "data is null; filter such rows out, give them a payload or set nullData=skip");
        }
        if (arnProblem != null) {
            throw rejected(record, rowNumber, RowLayout.STREAM_ARN, "InvalidStreamArn", arnProblem);
        }
        if (record.stream() == null) {
            throw rejected(record, rowNumber, RowLayout.STREAM_NAME, "NoStream",
                "no target stream: set the option streamName or streamArn, or give the row a streamName or "
                    + "streamArn value");
        }
        if (record.partitionKey() == null) {
            throw rejected(record, rowNumber, RowLayout.PARTITION_KEY, "NullPartitionKey",
                "partition key is null; coalesce it, set defaultPartition, or drop the column to spread "
                    + "records randomly");
        }
        check(() -> RecordRules.checkPartitionKey(record.partitionKey()), record, rowNumber,
            RowLayout.PARTITION_KEY, "InvalidPartitionKey");
        if (hashKeyProblem != null) {
            throw rejected(record, rowNumber, RowLayout.EXPLICIT_HASH_KEY, "InvalidExplicitHashKey", hashKeyProblem);
        }
        long bytes = record.bytes();
        if (bytes > (record.stream().equals(defaultStream) ? defaultStreamMaxBytes : maxRecordBytes)) {
            throw rejected(record, rowNumber, RowLayout.DATA, "RecordTooLarge", "the record has " + bytes
                + " bytes (data " + record.data().length + " plus partition key), over " + limitOf(record.stream()));
        }
        return record;
    }

    /** The record size limit for a stream, as an error names it: the option's, or the stream's own. */
    private String limitOf(String stream) {
        StreamDescription described = streams.get(stream);
        if (described != null && described.maxRecordBytes() < maxRecordBytes) {
            return "the " + described.maxRecordBytes() + " bytes stream '" + stream + "' takes (its MaxRecordSizeInKiB "
                + "is " + described.maxRecordKib() + "; UpdateMaxRecordSize raises it up to 10 MiB)";
        }
        return "maxRecordBytes=" + maxRecordBytes + " (Kinesis takes 1 MiB per record, or up to 10 MiB where the "
            + "stream allows it)";
    }

    private byte[] data(InternalRow row, String stream, String key, String explicitHashKey) {
        byte[] data = serializer != null ? serializer.serialize(layout.payload(row)) : layout.data(row);
        // A key the sink drew at random differs on a retry: it is no part of what names the record.
        return data == null || recordIds == null ? data
            : recordIds.prefix(stream, partitioning.drawsRandomKeys() ? null : key, explicitHashKey, data);
    }

    private static void check(Runnable rule, KinesisRecord record, long rowNumber, String column, String errorCode)
            throws RowRejected {
        try {
            rule.run();
        } catch (IllegalArgumentException e) {
            throw rejected(record, rowNumber, column, errorCode, e.getMessage());
        }
    }

    private static RowRejected rejected(KinesisRecord record, long rowNumber, String column, String errorCode, String problem) {
        return new RowRejected(new FailedRecord(record, rowNumber, column, errorCode, problem));
    }
}
