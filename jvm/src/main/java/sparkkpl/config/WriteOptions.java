package sparkkpl.config;

import java.io.Serializable;
import java.util.Map;

/**
 * One write's sink options, read and checked once on the driver ({@link WriteConfig}) and shipped to the
 * executors, which read values and parse nothing: grouped by what they decide. A group's components are
 * named after the options they hold, and {@link OptionGroups} fills them by those names; the components
 * documented as optional are null when the option was not given.
 *
 * @param resultKey optional: set by the Python API, which reads the write's result on the driver by it
 * @param settings what the write runs with, by config key, secrets masked (logs, the Spark UI, reports)
 */
public record WriteOptions(Target target, Delivery delivery, RecordShape shape, Registry registry,
                           Aggregating aggregating, Query query, ProducerSpec producer, String resultKey, Map<String, String> settings) implements Serializable {

    /**
     * Where the records go.
     *
     * @param streamName optional: the default target stream
     * @param partitioner optional: the rows' columns decide
     * @param defaultPartition optional: the constant partition key
     */
    public record Target(String streamName, Partitioner partitioner, String defaultPartition) implements Serializable {}

    /**
     * What a task does about records Kinesis has not taken, and the order it sends them in.
     *
     * @param deadLetterPath optional: where undelivered records go with failOnError=false
     */
    public record Delivery(long ackTimeoutMs, boolean failOnError, String deadLetterPath, boolean allowDuplicates,
                           Ordering ordering) implements Serializable {

        /** With ordering=key: a task keeps one Kinesis record per shard in flight. */
        public boolean inKeyOrder() {
            return ordering == Ordering.KEY;
        }
    }

    /**
     * How a row becomes a record.
     *
     * @param writeName optional: the user's name of a batch write in record ids
     */
    public record RecordShape(Format format, NullData nullData, long maxRecordBytes, RecordId recordId, String writeName)
        implements Serializable {}

    /**
     * The Glue Schema Registry the records' schema is in; read by the driver alone, which looks the schema up
     * once and gives the tasks its version id.
     *
     * @param schemaRegistryName optional: without it, records carry no registry header
     * @param schemaName optional: the stream's name
     * @param schemaRegistryEndpoint optional: Glue of the KPL's Region
     */
    public record Registry(String schemaRegistryName, String schemaName, boolean schemaAutoRegistration, SchemaCompatibility schemaCompatibility,
                           SchemaCompression schemaCompression, String schemaRegistryEndpoint) implements Serializable {

        public boolean used() {
            return schemaRegistryName != null;
        }
    }

    /**
     * Who packs rows into Kinesis records.
     *
     * @param aggregatesRecords whether several rows may travel in one Kinesis record: built by the tasks, or by the KPL
     * @param aggregateMaxBytes the largest aggregate a task builds (aggregation=executor)
     */
    public record Aggregating(Aggregation aggregation, boolean aggregatesRecords, int aggregateMaxBytes)
        implements Serializable {

        /** With aggregation=executor: the task builds the aggregates, the KPL sends each as one record. */
        public boolean inExecutor() {
            return aggregation == Aggregation.EXECUTOR;
        }
    }

    /**
     * A streaming query's own options, as Spark passes them on; both optional.
     */
    public record Query(String checkpointLocation, String queryName) implements Serializable {}

    /** Secrets masked: shown in the plan, so in the Spark UI's SQL tab. */
    @Override
    public String toString() {
        return "WriteOptions" + settings;
    }
}
