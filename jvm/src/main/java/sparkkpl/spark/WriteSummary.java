package sparkkpl.spark;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/** What a task wrote, sent to the driver with its commit; the driver adds them into the write's result. */
public final class WriteSummary implements WriterCommitMessage {
    private static final long serialVersionUID = 1L;

    final long recordsWritten;
    final long recordsFailed;
    final long bytesWritten;
    final long backpressureCycles;
    final long blockedMs;
    final long peakOutstandingRecords;
    final long peakOutstandingBytes;
    final long tasks;

    WriteSummary(long recordsWritten, long recordsFailed, long bytesWritten, long backpressureCycles,
                 long blockedMs, long peakOutstandingRecords, long peakOutstandingBytes, long tasks) {
        this.recordsWritten = recordsWritten;
        this.recordsFailed = recordsFailed;
        this.bytesWritten = bytesWritten;
        this.backpressureCycles = backpressureCycles;
        this.blockedMs = blockedMs;
        this.peakOutstandingRecords = peakOutstandingRecords;
        this.peakOutstandingBytes = peakOutstandingBytes;
        this.tasks = tasks;
    }

    static final WriteSummary EMPTY = new WriteSummary(0, 0, 0, 0, 0, 0, 0, 0);

    /** Counts add up; peaks are the highest any one producer reached. */
    WriteSummary plus(WriteSummary other) {
        return new WriteSummary(recordsWritten + other.recordsWritten, recordsFailed + other.recordsFailed,
            bytesWritten + other.bytesWritten, backpressureCycles + other.backpressureCycles,
            blockedMs + other.blockedMs, Math.max(peakOutstandingRecords, other.peakOutstandingRecords),
            Math.max(peakOutstandingBytes, other.peakOutstandingBytes), tasks + other.tasks);
    }

    /** Snake-case names, as the Python result object has them. */
    public Map<String, Long> toMap() {
        Map<String, Long> map = new LinkedHashMap<>();
        map.put("records_written", recordsWritten);
        map.put("records_failed", recordsFailed);
        map.put("bytes_written", bytesWritten);
        map.put("backpressure_cycles", backpressureCycles);
        map.put("blocked_ms", blockedMs);
        map.put("peak_outstanding_records", peakOutstandingRecords);
        map.put("peak_outstanding_bytes", peakOutstandingBytes);
        map.put("tasks", tasks);
        return map;
    }
}
