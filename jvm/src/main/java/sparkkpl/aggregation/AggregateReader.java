package sparkkpl.aggregation;

import com.google.protobuf.CodedInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import software.amazon.kinesis.producer.protobuf.Messages;
import sparkkpl.kinesis.KinesisRecord;

/**
 * Reads the user records back out of an aggregate that {@link AggregateBuilder} wrote, with the
 * KPL's own protobuf classes: the sink keeps an outstanding aggregate's bytes, not its records,
 * and needs the records again only when Kinesis fails or misplaces the aggregate.
 */
final class AggregateReader {
    private AggregateReader() {}

    /** The aggregate's user records, in the order they were added, in the aggregate's stream. */
    static List<KinesisRecord> records(KinesisRecord aggregate) {
        byte[] bytes = aggregate.data();
        int protobufBytes = bytes.length - AggregateBuilder.MAGIC.length - AggregateBuilder.MD5_BYTES;
        if (protobufBytes < 0 || !Arrays.equals(bytes, 0, AggregateBuilder.MAGIC.length, AggregateBuilder.MAGIC, 0,
                AggregateBuilder.MAGIC.length)) {
            throw new IllegalArgumentException("not an aggregated record: it does not start with the magic bytes");
        }
        Messages.AggregatedRecord parsed;
        try {
            parsed = Messages.AggregatedRecord.parseFrom(
                CodedInputStream.newInstance(bytes, AggregateBuilder.MAGIC.length, protobufBytes));
        } catch (IOException e) {
            throw new IllegalArgumentException("an aggregated record that does not parse: " + e.getMessage(), e);
        }
        List<KinesisRecord> records = new ArrayList<>(parsed.getRecordsCount());
        for (Messages.Record record : parsed.getRecordsList()) {
            String partitionKey = parsed.getPartitionKeyTable((int) record.getPartitionKeyIndex());
            String explicitHashKey = record.hasExplicitHashKeyIndex()
                ? parsed.getExplicitHashKeyTable((int) record.getExplicitHashKeyIndex()) : null;
            records.add(new KinesisRecord(aggregate.stream(), partitionKey, explicitHashKey,
                record.getData().toByteArray()));
        }
        return records;
    }
}
