package sparkkpl.spark;

import java.util.concurrent.ThreadLocalRandom;
import org.apache.spark.sql.catalyst.InternalRow;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.producer.FailedRecord;
import sparkkpl.producer.KinesisRecord;
import sparkkpl.producer.RecordRules;

/** Turns one row into the Kinesis record it stands for, or says which column makes that impossible. */
final class RecordAssembler {
    private final RowLayout layout;
    private final String defaultStream;

    RecordAssembler(WriteConfig config, RowLayout layout) {
        this.layout = layout;
        this.defaultStream = config.get(SinkOption.STREAM_NAME).orElse(null);
    }

    /** @throws RowRejected naming the column at fault, with what is known of the record */
    KinesisRecord assemble(InternalRow row, long rowNumber) throws RowRejected {
        String stream = layout.streamName(row);
        KinesisRecord record = new KinesisRecord(stream != null ? stream : defaultStream, partitionKey(row),
            layout.explicitHashKey(row), layout.data(row));
        if (record.data() == null) {
            throw rejected(record, rowNumber, RowLayout.DATA, "NullData",
                "data is null; filter such rows out or give them a payload");
        }
        if (record.stream() == null) {
            throw rejected(record, rowNumber, RowLayout.STREAM_NAME, "NoStream",
                "no target stream: set the option streamName or give the row a streamName value");
        }
        if (record.partitionKey() == null) {
            throw rejected(record, rowNumber, RowLayout.PARTITION_KEY, "NullPartitionKey",
                "partition key is null; coalesce it or drop the column to spread records randomly");
        }
        check(() -> RecordRules.checkPartitionKey(record.partitionKey()), record, rowNumber,
            RowLayout.PARTITION_KEY, "InvalidPartitionKey");
        if (record.explicitHashKey() != null) {
            check(() -> RecordRules.checkExplicitHashKey(record.explicitHashKey()), record, rowNumber,
                RowLayout.EXPLICIT_HASH_KEY, "InvalidExplicitHashKey");
        }
        return record;
    }

    private String partitionKey(InternalRow row) {
        return layout.hasPartitionKey() ? layout.partitionKey(row) : randomPartitionKey();
    }

    /** 128 random bits: spreads records evenly over shards, as Flink's RandomKinesisPartitioner does. */
    private static String randomPartitionKey() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    }

    private static void check(Runnable rule, KinesisRecord record, long rowNumber, String column, String errorCode)
            throws RowRejected {
        try {
            rule.run();
        } catch (IllegalArgumentException e) {
            throw rejected(record, rowNumber, column, errorCode, e.getMessage());
        }
    }

    static RowRejected rejected(KinesisRecord record, long rowNumber, String column, String errorCode, String problem) {
        return new RowRejected(new FailedRecord(record, rowNumber, column, errorCode, problem));
    }
}
