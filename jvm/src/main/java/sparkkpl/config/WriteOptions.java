package sparkkpl.config;

import java.io.Serializable;
import java.util.Map;

/**
 * One write's sink options, parsed and checked once on the driver ({@link WriteConfig}) and shipped to
 * the executors, which read values and parse nothing. The components documented below as optional are
 * null when the option was not given.
 *
 * @param streamName optional: the default target stream
 * @param deadLetterPath optional: where undelivered records go with failOnError=false
 * @param defaultPartition optional: the constant partition key
 * @param partitioner optional: the rows' columns decide
 * @param writeName optional: the user's name of a batch write in record ids
 * @param checkpointLocation optional: the streaming query's checkpoint, as Spark passes it on
 * @param queryName optional: the streaming query's name, as Spark passes it on
 * @param aggregatesRecords whether several rows may travel in one Kinesis record: built by the tasks, or by the KPL
 * @param aggregateMaxBytes the largest aggregate a task builds (aggregation=executor)
 * @param resultKey optional: set by the Python API, which reads the write's result on the driver by it
 * @param producer what the write's producers are made of
 * @param settings what the write runs with, by config key, secrets masked (logs, the Spark UI, reports)
 */
public record WriteOptions(String streamName, long ackTimeoutMs, boolean failOnError, String deadLetterPath,
                           long maxRecordBytes, NullData nullData, Partitioner partitioner, String defaultPartition,
                           RecordId recordId, String writeName, boolean allowDuplicates, Format format,
                           String checkpointLocation, String queryName, Aggregation aggregation,
                           boolean aggregatesRecords, int aggregateMaxBytes, String resultKey, ProducerSpec producer,
                           Map<String, String> settings) implements Serializable {

    /** With aggregation=executor: the task builds the aggregates, the KPL sends each as one record. */
    public boolean aggregatesInExecutor() {
        return aggregation == Aggregation.EXECUTOR;
    }

    /** Secrets masked: shown in the plan, so in the Spark UI's SQL tab. */
    @Override
    public String toString() {
        return "WriteOptions" + settings;
    }

    /** The options by name, for {@link WriteConfig}; a component not set stays null, 0 or false. */
    static final class Builder {
        private String streamName;
        private long ackTimeoutMs;
        private boolean failOnError;
        private String deadLetterPath;
        private long maxRecordBytes;
        private NullData nullData;
        private Partitioner partitioner;
        private String defaultPartition;
        private RecordId recordId;
        private String writeName;
        private boolean allowDuplicates;
        private Format format;
        private String checkpointLocation;
        private String queryName;
        private Aggregation aggregation;
        private boolean aggregatesRecords;
        private int aggregateMaxBytes;
        private String resultKey;
        private ProducerSpec producer;
        private Map<String, String> settings;

        Builder streamName(String value) {
            streamName = value;
            return this;
        }

        Builder ackTimeoutMs(long value) {
            ackTimeoutMs = value;
            return this;
        }

        Builder failOnError(boolean value) {
            failOnError = value;
            return this;
        }

        Builder deadLetterPath(String value) {
            deadLetterPath = value;
            return this;
        }

        Builder maxRecordBytes(long value) {
            maxRecordBytes = value;
            return this;
        }

        Builder nullData(NullData value) {
            nullData = value;
            return this;
        }

        Builder partitioner(Partitioner value) {
            partitioner = value;
            return this;
        }

        Builder defaultPartition(String value) {
            defaultPartition = value;
            return this;
        }

        Builder recordId(RecordId value) {
            recordId = value;
            return this;
        }

        Builder writeName(String value) {
            writeName = value;
            return this;
        }

        Builder allowDuplicates(boolean value) {
            allowDuplicates = value;
            return this;
        }

        Builder format(Format value) {
            format = value;
            return this;
        }

        Builder checkpointLocation(String value) {
            checkpointLocation = value;
            return this;
        }

        Builder queryName(String value) {
            queryName = value;
            return this;
        }

        Builder aggregation(Aggregation value) {
            aggregation = value;
            return this;
        }

        Builder aggregatesRecords(boolean value) {
            aggregatesRecords = value;
            return this;
        }

        Builder aggregateMaxBytes(int value) {
            aggregateMaxBytes = value;
            return this;
        }

        Builder resultKey(String value) {
            resultKey = value;
            return this;
        }

        Builder producer(ProducerSpec value) {
            producer = value;
            return this;
        }

        Builder settings(Map<String, String> value) {
            settings = value;
            return this;
        }

        WriteOptions build() {
            return new WriteOptions(streamName, ackTimeoutMs, failOnError, deadLetterPath, maxRecordBytes, nullData,
                partitioner, defaultPartition, recordId, writeName, allowDuplicates, format, checkpointLocation, queryName,
                aggregation, aggregatesRecords, aggregateMaxBytes, resultKey, producer, settings);
        }
    }
}
