package sparkkpl.metrics;

import java.util.Locale;

/**
 * Each figure a write reports, declared once: its name in the Python result and the Spark UI,
 * what it means, and how task values combine (counts add up; peaks take the highest).
 */
public enum WriteMetric {
    RECORDS_WRITTEN("records acknowledged by Kinesis", true),
    RECORDS_ADDED("records the tasks handed to the KPL: acknowledged (records_written), finally failed, or still "
        + "awaiting Kinesis's answer while the write runs", true),
    RECORDS_FAILED("records not delivered: finally failed by Kinesis, or rows that could not become records", true),
    RECORDS_SKIPPED("rows not sent on purpose: null data with nullData=skip", true),
    RECORDS_REPLAYED("rows of a micro-batch delivered before a restart, which Spark ran again: not re-sent", true),
    RECORDS_RESENT("records sent again: Kinesis stored their aggregate in a shard it was not built for (the stream "
        + "was resharded mid-write), where a consumer that checks hash ranges drops it, or refused them for their "
        + "shard's throughput in every attempt until RecordTtl, so that they were never stored", true),
    RECORDS_UNAGGREGATED("rows sent one per Kinesis record, not aggregated, because their stream places records "
        + "itself (record distribution strategy AUTO), where a consumer that checks hash ranges drops aggregates", true),
    BYTES_WRITTEN("bytes of acknowledged records (data plus partition key, as Kinesis counts them)", true),
    KINESIS_RECORDS_WRITTEN("Kinesis records acknowledged, each an aggregate of records or one record alone (with "
        + "aggregation=kpl: the records handed to the KPL, which aggregates them in turn)", true),
    KINESIS_THROTTLES("attempts Kinesis refused for its shard's throughput (ProvisionedThroughputExceededException), "
        + "which the KPL retried", true),
    BACKPRESSURE_CYCLES("times a task waited for room under the queue limit, or (ordering=key) behind its own records "
        + "of a shard", true),
    BLOCKED_MS("milliseconds tasks spent waiting for room under the queue limit, or (ordering=key) behind their own "
        + "records of a shard: the backpressure Kinesis put on the write", true),
    PEAK_OUTSTANDING_RECORDS("most records an executor's producer had outstanding", false),
    PEAK_OUTSTANDING_BYTES("most bytes an executor's producer had outstanding", false),
    TASKS("tasks that committed", true);

    private final String key = name().toLowerCase(Locale.ROOT);
    private final String description;
    private final boolean additive;

    WriteMetric(String description, boolean additive) {
        this.description = description;
        this.additive = additive;
    }

    /** {@code records_written}: as the Python result object names it. */
    public String key() {
        return key; // Spark asks for the task's metrics every 100 rows
    }

    public String description() {
        return description;
    }

    long combine(long a, long b) {
        return additive ? a + b : Math.max(a, b);
    }
}
