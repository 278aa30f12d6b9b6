package sparkkpl.spark;

import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.streaming.CommittedBatches;

/**
 * A write as its table ({@link KplTable}) keeps it: for a streaming query, everything that lasts the
 * query's life. Spark keeps one table per query and asks it for a new write at every micro-batch
 * ({@code V2Writes} calls {@code newWriteBuilder}, then {@code Write.toStreaming}), always with the
 * query's id; so the query's options are resolved and its dead-letter folder made once, and its
 * micro-batches share the driver's look at the stream and the record of committed batches. A batch
 * write comes with a table and an id of its own, and looks at its stream once ({@link StreamLook#perWrite}).
 */
final class QueryWrite {
    private static final String COMMITTED_BATCHES_DIR = "kpl-sink";
    private static final String DEFAULT_CHECKPOINT_ROOT = "spark.sql.streaming.checkpointLocation";

    /** What the write was resolved from: Spark's id of the write, the options given, the rows' schema. */
    private final String queryId;
    private final Map<String, String> given;
    private final StructType schema;
    private final ResolvedWrite resolved;
    private final StreamLook queryLook = StreamLook.perQuery();
    /** Made at the first micro-batch; a batch write has none. Guarded by this. */
    private CommittedBatches committed;

    QueryWrite(String queryId, Map<String, String> given, StructType schema, ResolvedWrite resolved) {
        this.queryId = queryId;
        this.given = Map.copyOf(given);
        this.schema = schema;
        this.resolved = resolved;
    }

    /** Whether this is the write Spark asks for again: the same query, options and rows. */
    boolean serves(String queryId, Map<String, String> given, StructType schema) {
        return this.queryId.equals(queryId) && this.given.equals(given) && this.schema.equals(schema);
    }

    ResolvedWrite resolved() {
        return resolved;
    }

    /** The streaming query's look, which its micro-batches reuse ({@link StreamLook#perQuery}). */
    StreamLook queryLook() {
        return queryLook;
    }

    /** The streaming query's committed micro-batches, under its checkpoint (no call to the file system here). */
    synchronized CommittedBatches committedBatches() {
        if (committed == null) {
            committed = new CommittedBatches(committedBatchesDirectory(),
                SparkSession.active().sparkContext().hadoopConfiguration());
        }
        return committed;
    }

    /**
     * Under the query's checkpoint: the checkpointLocation option Spark passes on, else under the
     * session's default checkpoint root, named by the query id, which the checkpoint keeps.
     */
    private String committedBatchesDirectory() {
        String checkpoint = resolved.options().query().checkpointLocation();
        if (checkpoint != null) {
            return checkpoint + "/" + COMMITTED_BATCHES_DIR;
        }
        scala.Option<String> root = SparkSession.active().conf().getOption(DEFAULT_CHECKPOINT_ROOT);
        if (root.isEmpty()) {
            throw new IllegalArgumentException("The kpl sink keeps its committed micro-batches under the query's "
                + "checkpoint: set .option(\"checkpointLocation\", ...) on writeStream, or " + DEFAULT_CHECKPOINT_ROOT);
        }
        return root.get() + "/" + COMMITTED_BATCHES_DIR + "-" + resolved.queryId();
    }
}
