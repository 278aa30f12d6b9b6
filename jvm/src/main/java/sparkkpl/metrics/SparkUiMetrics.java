package sparkkpl.metrics;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.execution.metric.CustomMetrics;

/**
 * The write's figures as Spark UI metrics. Spark re-creates each metric on the driver from its
 * class name, so each needs a public class with a no-argument constructor.
 */
public final class SparkUiMetrics {
    private SparkUiMetrics() {}

    public static CustomMetric[] all() {
        return new CustomMetric[] {new RecordsWritten(), new RecordsAdded(), new RecordsFailed(), new RecordsSkipped(), new RecordsReplayed(),
            new RecordsResent(), new RecordsUnaggregated(), new BytesWritten(), new KinesisRecordsWritten(),
            new KinesisThrottles(),
            new BackpressureCycles(), new BlockedMs(), new PeakOutstandingRecords(), new PeakOutstandingBytes(),
            new Tasks()};
    }

    /**
     * Each metric's key ({@code records_written}) by the type Spark's status store gives its values
     * under, for reading the SQL tab's live figures (Spark 3.5 names nested classes differently).
     */
    public static Map<String, String> keysBySparkType() {
        Map<String, String> keys = new HashMap<>();
        for (CustomMetric metric : all()) {
            keys.put(CustomMetrics.buildV2CustomMetricTypeName(metric), metric.name());
        }
        return keys;
    }

    abstract static class UiMetric implements CustomMetric {
        private final WriteMetric metric;

        UiMetric(WriteMetric metric) {
            this.metric = metric;
        }

        @Override
        public String name() {
            return metric.key();
        }

        @Override
        public String description() {
            return metric.description();
        }

        @Override
        public String aggregateTaskMetrics(long[] taskValues) {
            long total = 0;
            for (long value : taskValues) {
                total = metric.combine(total, value);
            }
            return String.valueOf(total);
        }
    }

    public static final class RecordsWritten extends UiMetric {
        public RecordsWritten() {
            super(WriteMetric.RECORDS_WRITTEN);
        }
    }

    public static final class RecordsAdded extends UiMetric {
        public RecordsAdded() {
            super(WriteMetric.RECORDS_ADDED);
        }
    }

    public static final class RecordsFailed extends UiMetric {
        public RecordsFailed() {
            super(WriteMetric.RECORDS_FAILED);
        }
    }

    public static final class RecordsSkipped extends UiMetric {
        public RecordsSkipped() {
            super(WriteMetric.RECORDS_SKIPPED);
        }
    }

    public static final class RecordsReplayed extends UiMetric {
        public RecordsReplayed() {
            super(WriteMetric.RECORDS_REPLAYED);
        }
    }

    public static final class RecordsResent extends UiMetric {
        public RecordsResent() {
            super(WriteMetric.RECORDS_RESENT);
        }
    }

    public static final class RecordsUnaggregated extends UiMetric {
        public RecordsUnaggregated() {
            super(WriteMetric.RECORDS_UNAGGREGATED);
        }
    }

    public static final class BytesWritten extends UiMetric {
        public BytesWritten() {
            super(WriteMetric.BYTES_WRITTEN);
        }
    }

    public static final class KinesisRecordsWritten extends UiMetric {
        public KinesisRecordsWritten() {
            super(WriteMetric.KINESIS_RECORDS_WRITTEN);
        }
    }

    public static final class KinesisThrottles extends UiMetric {
        public KinesisThrottles() {
            super(WriteMetric.KINESIS_THROTTLES);
        }
    }

    public static final class BackpressureCycles extends UiMetric {
        public BackpressureCycles() {
            super(WriteMetric.BACKPRESSURE_CYCLES);
        }
    }

    public static final class BlockedMs extends UiMetric {
        public BlockedMs() {
            super(WriteMetric.BLOCKED_MS);
        }
    }

    public static final class PeakOutstandingRecords extends UiMetric {
        public PeakOutstandingRecords() {
            super(WriteMetric.PEAK_OUTSTANDING_RECORDS);
        }
    }

    public static final class PeakOutstandingBytes extends UiMetric {
        public PeakOutstandingBytes() {
            super(WriteMetric.PEAK_OUTSTANDING_BYTES);
        }
    }

    public static final class Tasks extends UiMetric {
        public Tasks() {
            super(WriteMetric.TASKS);
        }
    }
}
