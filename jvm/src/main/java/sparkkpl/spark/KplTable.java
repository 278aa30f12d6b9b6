package sparkkpl.spark;

import java.io.IOException;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.streaming.ReportsSinkMetrics;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;
import scala.collection.Iterator;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.failures.DeadLetterFile;
import sparkkpl.metrics.ProgressFigures;
import sparkkpl.records.Partitioning;
import sparkkpl.records.PayloadFormat;
import sparkkpl.records.RowLayout;

/**
 * A Kinesis sink seen as a Spark table: append-only, with the written DataFrame's schema. A streaming
 * query keeps its table for its life, and Spark reads the table's figures for each progress report. A
 * table defined in SQL ({@code CREATE TABLE clicks (...) USING kpl OPTIONS (streamName 'clicks')}) keeps
 * its OPTIONS as the defaults of every {@code INSERT INTO} it receives.
 */
final class KplTable implements SupportsWrite, ReportsSinkMetrics {
    private final StructType schema;
    private final ProgressFigures progress = new ProgressFigures();
    /** A SQL table's OPTIONS; none for a DataFrame's write, whose options come with the write. */
    private final Map<String, String> tableOptions;

    KplTable(StructType schema, Map<String, String> tableOptions) {
        this.schema = schema;
        this.tableOptions = Map.copyOf(tableOptions);
    }

    @Override
    public String name() {
        return KplDataSource.SHORT_NAME;
    }

    @Override
    public StructType schema() {
        return schema;
    }

    /** The figures of the micro-batches committed since the last progress report, by WriteResult's names. */
    @Override
    public Map<String, String> metrics() {
        return progress.takeForReport();
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE,
            TableCapability.ACCEPT_ANY_SCHEMA);
    }

    /**
     * The write's one resolution: options and config keys are parsed into values (or taken as the
     * writeSettings report parsed them for spark_kpl.write: {@link ReportedResolutions}) and checked here,
     * against the session and the rows' columns, before any task. The plan of a batch write, or of each
     * micro-batch, is made from it and the driver's look at the stream ({@link StreamLook}).
     */
    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        // Names match in any case: the write's own option replaces the table's.
        Map<String, String> given = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        given.putAll(tableOptions);
        given.putAll(info.options().asCaseSensitiveMap());
        WriteConfig resolved = ReportedResolutions.take(sessionConf(), given);
        refuseSpeculationUnlessAllowed(resolved.options());
        PayloadFormat format = PayloadFormat.resolve(resolved.options().format(), SparkSession.active());
        RowLayout layout = RowLayout.of(info.schema(), format.serializesRow());
        WriteOptions options = resolved.options();
        if (options.streamName() == null && !layout.namesStreams()) {
            throw new IllegalArgumentException("The kpl sink has no stream to write to: set the option '"
                + SinkOption.STREAM_NAME.optionName() + "' (or the config key " + SinkOption.STREAM_NAME.confKey()
                + "), or give a column '" + RowLayout.STREAM_NAME + "' naming each row's stream");
        }
        ResolvedWrite write = new ResolvedWrite(resolved, layout, format,
            Partitioning.chosen(options.partitioner(), options.defaultPartition(), layout), info.queryId(),
            deadLetterLocation(options), layout.namesStreams() ? resolved.producerForAutoStreams() : null);
        return new WriteBuilder() {
            @Override
            public Write build() {
                return new KplWrite(write, progress);
            }
        };
    }

    /** Speculation runs a second attempt of a slow task alongside the first: both send its records. */
    private static void refuseSpeculationUnlessAllowed(WriteOptions options) {
        boolean speculation = SparkSession.active().sparkContext().conf().getBoolean("spark.speculation", false);
        if (speculation && !options.allowDuplicates()) {
            throw new IllegalArgumentException("spark.speculation=true runs duplicate attempts of slow tasks, and "
                + "each attempt sends its records to Kinesis, which cannot drop the copies. Turn speculation off "
                + "for this job, or accept duplicates with the option allowDuplicates=true (with recordId=prefix "
                + "consumers can drop them: see spark_kpl.dedup)");
        }
    }

    private static DeadLetterFile.Location deadLetterLocation(WriteOptions options) {
        Optional<String> path = Optional.ofNullable(options.deadLetterPath());
        if (path.isEmpty()) {
            return null;
        }
        SparkContext spark = SparkSession.active().sparkContext();
        DeadLetterFile.Location location = new DeadLetterFile.Location(path.get(), spark.hadoopConfiguration());
        try {
            if (!spark.isLocal() && location.implicitlyLocal()) {
                throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "': '"
                    + path.get() + "' is a folder on the local disk of each machine, and master " + spark.master()
                    + " runs executors elsewhere: each would keep its dead letters on its own disk. Give a shared "
                    + "file system (hdfs://, s3a://, ...), or a file: URI (file:///mnt/...) for a folder mounted at "
                    + "that path on every node");
            }
            location.create();
        } catch (IOException e) {
            throw new IllegalArgumentException("Option '" + SinkOption.DEAD_LETTER_PATH.optionName() + "': cannot "
                + "create the folder '" + path.get() + "': " + e.getMessage(), e);
        }
        return location;
    }

    static Map<String, String> sessionConf() {
        Map<String, String> conf = new java.util.HashMap<>();
        Iterator<Tuple2<String, String>> entries = SparkSession.active().conf().getAll().iterator();
        while (entries.hasNext()) {
            Tuple2<String, String> entry = entries.next();
            conf.put(entry._1(), entry._2());
        }
        return conf;
    }
}
