package sparkkpl.records;

import java.io.Serializable;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.spark.sql.catalyst.InternalRow;
import sparkkpl.config.Partitioner;

/**
 * Where each record's partition key comes from, as FlinkKinesisProducer's partitioners: a random
 * key, the Spark partition id ({@code fixed}), the {@code partitionKey} column, or one constant key
 * ({@code defaultPartition}). Chosen and checked on the driver.
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
     * @param partitioner the option's value, or null when not given
     * @param defaultPartition the option's value (a checked key), or null
     * @throws IllegalArgumentException for a partitioner that contradicts the columns, or an option
     *     that would be ignored
     */
    public static Partitioning chosen(Partitioner partitioner, String defaultPartition, RowLayout layout) {
        Partitioner chosen = partitioner != null ? partitioner
            : layout.hasPartitionKey() ? Partitioner.COLUMN : defaultPartition != null ? null : Partitioner.RANDOM;
        if (chosen == null) {
            return new Partitioning(Source.CONSTANT, defaultPartition);
        }
        if (chosen == Partitioner.COLUMN) {
            if (!layout.hasPartitionKey()) {
                throw new IllegalArgumentException("partitioner=column needs a '" + RowLayout.PARTITION_KEY + "' column "
                    + "(spark_kpl.write(partition_key=...) adds it from a column name or expression)");
            }
            return new Partitioning(Source.COLUMN, defaultPartition);
        }
        String name = chosen.name().toLowerCase(Locale.ROOT);
        if (layout.hasPartitionKey()) {
            throw new IllegalArgumentException("partitioner=" + name + " makes its own keys, but the rows have a '"
                + RowLayout.PARTITION_KEY + "' column too: drop the column or the option");
        }
        if (defaultPartition != null) {
            throw new IllegalArgumentException("Option 'defaultPartition' would be ignored with partitioner=" + name
                + ": it is the key of every record without a partitionKey column, or of rows whose partitionKey is "
                + "null with one");
        }
        return new Partitioning(chosen == Partitioner.FIXED ? Source.FIXED : Source.RANDOM, null);
    }

    /**
     * Whether the sink makes every key (random, fixed, a constant), rather than taking the user's
     * partitionKey column: executor-side aggregation then needs no shard map (ShardAggregator).
     */
    public boolean choosesKeys() {
        return source != Source.COLUMN;
    }

    /**
     * Whether each key is drawn at random, so a retry of the same row gets another one, and the rows spread
     * over the stream's shards.
     */
    public boolean drawsRandomKeys() {
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
