package sparkkpl.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The Spark data source {@code kpl}: {@code df.write.format("kpl").option("streamName", s).mode("append").save()};
 * read, it answers the sink's reports ({@code spark.read.format("kpl").option("report", ...)}).
 */
public final class KplDataSource implements TableProvider, DataSourceRegister {
    public static final String SHORT_NAME = "kpl";

    @Override
    public String shortName() {
        return SHORT_NAME;
    }

    /** Spark asks only when reading, which the sink answers with its reports only (see {@link SinkReport}). */
    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SinkReport.requested(options).map(SinkReport::schema).orElseThrow(() ->
            new UnsupportedOperationException("The kpl data source only writes to Kinesis; read a stream with a "
                + "Kinesis consumer instead (reading format kpl answers only the sink's reports, "
                + "option 'report')"));
    }

    /** The table takes the schema of the DataFrame being written, or of a SQL table's definition. */
    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return SinkReport.requested(new CaseInsensitiveStringMap(properties))
            .<Table>map(SinkReportTable::new).orElseGet(() -> new KplTable(schema, sqlTableOptions(properties)));
    }

    /**
     * A table defined in SQL comes from the session catalog with its OPTIONS as {@code option.<name>}
     * properties, beside others of the catalog's (provider, owner, location); a DataFrame's write has none.
     */
    private static Map<String, String> sqlTableOptions(Map<String, String> properties) {
        Map<String, String> options = new java.util.HashMap<>();
        properties.forEach((key, value) -> {
            if (key.startsWith(TableCatalog.OPTION_PREFIX)) {
                options.put(key.substring(TableCatalog.OPTION_PREFIX.length()), value);
            }
        });
        return options;
    }
}
