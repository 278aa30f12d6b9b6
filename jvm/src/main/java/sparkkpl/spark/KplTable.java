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
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.collection.Iterator;
import sparkkpl.aws.AwsRegion;
import sparkkpl.aws.StreamAccount;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.failures.DeadLetterFile;
import sparkkpl.metrics.ProgressFigures;
import sparkkpl.records.Partitioning;
import sparkkpl.records.PayloadFormat;
import sparkkpl.records.RowLayout;
import sparkkpl.records.SchemaRegistration;

/**
 * A Kinesis sink seen as a Spark table: append-only, with the written DataFrame's schema. A streaming
 * query keeps its table for its life (Spark's {@code MicroBatchExecution} holds it as the query's sink),
 * so the table keeps what lasts the query: its write, resolved once ({@link QueryWrite}), and its figures,
 * which Spark reads for each progress report. A
 * table defined in SQL ({@code CREATE TABLE clicks (...) USING kpl OPTIONS (streamName 'clicks')}) keeps
 * its OPTIONS as the defaults of every {@code INSERT INTO} it receives.
 */
final class KplTable implements SupportsWrite, ReportsSinkMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(KplTable.class);
    /** Why an overwrite is refused, and what works instead. */
    private static final String OVERWRITE_REFUSED = "The kpl sink only appends records to a Kinesis stream, which cannot "
        + "be truncated: save mode Overwrite, INSERT OVERWRITE and a streaming query's Complete output mode are "
        + "refused. Write in save mode Append, with INSERT INTO, or in a streaming query's Append output mode";
    private final StructType schema;
    private final ProgressFigures progress = new ProgressFigures();
    /** A SQL table's OPTIONS; none for a DataFrame's write, whose options come with the write. */
    private final Map<String, String> tableOptions;
    /** The last write resolved: a streaming query's, which its micro-batches share. */
    private volatile QueryWrite kept;

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
            TableCapability.ACCEPT_ANY_SCHEMA, TableCapability.TRUNCATE);
    }

    /**
     * The write Spark asks this table for. A streaming query asks again at every micro-batch, with its
     * own id, and gets the write its table keeps ({@link QueryWrite}): resolved once for the query.
     */
    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        // Names match in any case: the write's own option replaces the table's.
        Map<String, String> given = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        given.putAll(tableOptions);
        given.putAll(info.options().asCaseSensitiveMap());
        QueryWrite write = kept;
        if (write == null || !write.serves(info.queryId(), given, info.schema())) {
            write = new QueryWrite(info.queryId(), given, info.schema(), resolved(info, given));
            kept = write;
        }
        QueryWrite chosen = write;
        return new AppendOnly() {
            @Override
            public Write build() {
                return new KplWrite(chosen, progress);
            }
        };
    }

    /**
     * A write that only appends. The table claims {@link TableCapability#TRUNCATE} only so that Spark asks it
     * to truncate (save mode Overwrite, INSERT OVERWRITE, a query's Complete output mode) instead of
     * refusing with its own words, which advise Overwrite for any source: this refusal names what works.
     */
    private abstract static class AppendOnly implements WriteBuilder, SupportsTruncate {
        @Override
        public WriteBuilder truncate() {
            throw new IllegalArgumentException(OVERWRITE_REFUSED);
        }
    }

    /**
     * The write's one resolution: options and config keys are parsed into values (or taken as the
     * writeSettings report parsed them for spark_kpl.write: {@link ReportedResolutions}) and checked here,
     * against the session and the rows' columns, before any task; the dead-letter folder is made. The plan
     * of a batch write, or of each micro-batch, is made from it and the driver's look at the stream
     * ({@link StreamLook}).
     */
    private static ResolvedWrite resolved(LogicalWriteInfo info, Map<String, String> given) {
        WriteConfig resolved = ReportedResolutions.take(sessionConf(), given);
        refuseSpeculationUnlessAllowed(resolved.options());
        PayloadFormat format = PayloadFormat.of(resolved.options().shape().format(), SparkSession.active());
        WriteOptions options = resolved.options();
        RowLayout layout = arnScoped(RowLayout.of(info.schema(), format.serializesRow()), options);
        if (options.target().streamName() == null && !layout.namesStreams()) {
            throw new IllegalArgumentException("The kpl sink has no stream to write to: set the option '"
                + SinkOption.STREAM_NAME.optionName() + "' (or the config key " + SinkOption.STREAM_NAME.confKey()
                + ") or '" + SinkOption.STREAM_ARN.optionName() + "', or give a column '" + RowLayout.STREAM_NAME
                + "' or '" + RowLayout.STREAM_ARN + "' naming each row's stream");
        }
        StreamAccount.check(options.producer());
        format = SchemaRegistration.headed(format, layout, options);
        LOG.debug("Write {} resolved", info.queryId());
        return new ResolvedWrite(resolved, layout, format,
            Partitioning.chosen(options.target().partitioner(), options.target().defaultPartition(), layout), info.queryId(),
            deadLetterLocation(options), layout.namesStreams() ? resolved.producerForAutoStreams() : null);
    }

    /**
     * Rows that name streams by ARN are held to the region the KPL writes in and the account its credentials
     * are of, which the driver finds once (STS GetCallerIdentity, unless a stream or role ARN says).
     */
    private static RowLayout arnScoped(RowLayout layout, WriteOptions options) {
        if (!layout.namesStreamsByArn()) {
            return layout;
        }
        String region = AwsRegion.of(options.producer().kplConfiguration());
        return layout.withArnScope(region, StreamAccount.writable(options.producer(), region));
    }

    /** Speculation runs a second attempt of a slow task alongside the first: both send its records. */
    private static void refuseSpeculationUnlessAllowed(WriteOptions options) {
        boolean speculation = SparkSession.active().sparkContext().conf().getBoolean("spark.speculation", false);
        if (speculation && !options.delivery().allowDuplicates()) {
            throw new IllegalArgumentException("spark.speculation=true runs duplicate attempts of slow tasks, and "
                + "each attempt sends its records to Kinesis, which cannot drop the copies. Turn speculation off "
                + "for this job, or accept duplicates with the option allowDuplicates=true (with recordId=prefix "
                + "consumers can drop them: see spark_kpl.dedup)");
        }
    }

    private static DeadLetterFile.Location deadLetterLocation(WriteOptions options) {
        Optional<String> path = Optional.ofNullable(options.delivery().deadLetterPath());
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
