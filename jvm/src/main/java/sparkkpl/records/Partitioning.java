package sparkkpl.records;

import java.io.Serializable;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.spark.sql.catalyst.InternalRow;
import sparkkpl.config.Partitioner;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.producer.RecordRules;

/**
 * Where each record's partition key comes from, as FlinkKinesisProducer's partitioners: a random
 * key, the Spark partition id ({@code fixed}), the {@code partitionKey} column, or one constant key
 * ({@code defaultPartition}). Resolved and checked on the driver.
 */
public final class Partitioning implements Serializable {
    private static final long serialVersionUID = 1L;

    private enum Source { RANDOM, FIXED, COLUMN, CONSTANT }

    private final Source source;
    /** The constant key, or with a column the key of rows whose column is null; may be null. */
    private final String defaultPartition;

    private Partitioning(Source source, String defaultPartition) {
        this.source = source;
        this.defaultPartition = defaultPartition;
    }

    /**
     * {@code partitioner} defaults to {@code column} when the rows have a partitionKey column, else
     * to one constant key when {@code defaultPartition} is set, else to {@code random}.
     *
     * @throws IllegalArgumentException for a partitioner that contradicts the columns, or an option
     *     that would be ignored
     */
    public static Partitioning resolve(WriteConfig config, RowLayout layout) {
        String defaultPartition = config.get(SinkOption.DEFAULT_PARTITION).orElse(null);
        if (defaultPartition != null) {
            try {
                RecordRules.checkPartitionKey(defaultPartition);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid value for option '" + SinkOption.DEFAULT_PARTITION.optionName()
                    + "' (" + SinkOption.DEFAULT_PARTITION.confKey() + "): " + e.getMessage(), e);
            }
        }
        Partitioner partitioner = config.partitioner().orElse(
            layout.hasPartitionKey() ? Partitioner.COLUMN : defaultPartition != null ? null : Partitioner.RANDOM);
        if (partitioner == null) {
            return new Partitioning(Source.CONSTANT, defaultPartition);
        }
        if (partitioner == Partitioner.COLUMN) {
            if (!layout.hasPartitionKey()) {
                throw new IllegalArgumentException("partitioner=column needs a '" + RowLayout.PARTITION_KEY + "' column "
                    + "(spark_kpl.write(partition_key=...) adds it from a column name or expression)");
            }
            return new Partitioning(Source.COLUMN, defaultPartition);
        }
        if (layout.hasPartitionKey()) {
            throw new IllegalArgumentException("partitioner=" + SinkOption.written(partitioner) + " makes its own keys, but the rows have a '"
                + RowLayout.PARTITION_KEY + "' column too: drop the column or the option");
        }
        if (defaultPartition != null) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEFAULT_PARTITION.optionName() + "' would be "
                + "ignored with partitioner=" + SinkOption.written(partitioner) + ": it is the key of every record without a partitionKey "
                + "column, or of rows whose partitionKey is null with one");
        }
        return new Partitioning(partitioner == Partitioner.FIXED ? Source.FIXED : Source.RANDOM, null);
    }

    /**
     * Whether the sink makes every key (random, fixed, a constant), rather than taking the user's
     * partitionKey column: executor-side aggregation then needs no shard map (ShardAggregator).
     */
    public boolean choosesKeys() {
        return source != Source.COLUMN;
    }

    /** Whether each key is drawn at random, so a retry of the same row gets another one. */
    boolean drawsRandomKeys() {
        return source == Source.RANDOM;
    }

    /** The row's key; null only when its partitionKey column is null and no defaultPartition is set. */
    String key(InternalRow row, RowLayout layout, int sparkPartition) {
        switch (source) {
            case FIXED:
                return String.valueOf(sparkPartition);
            case CONSTANT:
                return defaultPartition;
            case COLUMN:
                String key = layout.partitionKey(row);
                return key != null ? key : defaultPartition;
            default:
                return randomKey();
        }
    }

    /** 128 random bits: spreads records evenly over shards, as Flink's RandomKinesisPartitioner does. */
    private static String randomKey() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    }
}
