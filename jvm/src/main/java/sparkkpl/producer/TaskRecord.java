package sparkkpl.producer;

import sparkkpl.kinesis.KinesisRecord;

/**
 * One of a task's records ({@link KinesisRecord}) on its way to Kinesis, with its row and the room it
 * holds under the queue limit.
 *
 * @param rowNumber the row's 1-based position in its Spark partition
 * @param size its bytes as the queue limit counts them ({@link KinesisRecord#bytes})
 */
public record TaskRecord(KinesisRecord record, long rowNumber, long size) {}
