package sparkkpl.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A {@link SinkReport} as a read-only table whose rows the driver computes itself (a local scan). */
final class SinkReportTable implements SupportsRead {
    private final SinkReport report;

    SinkReportTable(SinkReport report) {
        this.report = report;
    }

    @Override
    public String name() {
        return KplDataSource.SHORT_NAME + " report " + report.optionValue();
    }

    @Override
    public StructType schema() {
        return report.schema();
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        Map<String, String> others = SinkReport.otherOptions(options);
        return () -> new LocalScan() {
            @Override
            public StructType readSchema() {
                return report.schema();
            }

            @Override
            public InternalRow[] rows() {
                return report.rows(others).toArray(new InternalRow[0]);
            }
        };
    }
}
