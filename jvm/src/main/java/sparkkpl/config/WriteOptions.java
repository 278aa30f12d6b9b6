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
 * @param resultId optional: set by the Python API to collect the write's result on the driver
 * @param producer what the write's producers are made of
 * @param settings what the write runs with, by config key, secrets masked (logs, the Spark UI, reports)
 */
public record WriteOptions(String streamName, long ackTimeoutMs, boolean failOnError, String deadLetterPath,
                           long maxRecordBytes, NullData nullData, Partitioner partitioner, String defaultPartition,
                           RecordId recordId, String writeName, boolean allowDuplicates, Format format,
                           String checkpointLocation, String queryName, Aggregation aggregation,
                           boolean aggregatesRecords, int aggregateMaxBytes, String resultId, ProducerSpec producer,
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
}
