package sparkkpl.failures;

import sparkkpl.kinesis.KinesisRecord;

/**
 * A record that will not reach Kinesis: finally failed by the KPL, or refused before it was sent.
 *
 * @param record what was (or would have been) sent; a part may be null when the row lacked it
 * @param rowNumber the row's 1-based position in its Spark partition
 * @param column the row's offending column, or null when Kinesis failed the record
 * @param errorCode Kinesis's error code of the last attempt (e.g. {@code Expired}), or the sink's own
 *     (e.g. {@code RecordTooLarge}) for a record refused before sending
 * @param errorMessage the error in words, with the earlier attempts' errors where there were some
 */
public record FailedRecord(KinesisRecord record, long rowNumber, String column, String errorCode,
                           String errorMessage) {}
