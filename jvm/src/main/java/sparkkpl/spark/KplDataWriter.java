package sparkkpl.spark;

import java.io.IOException;
import java.util.Iterator;
import org.apache.spark.TaskContext;
import org.apache.spark.TaskKilledException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import sparkkpl.failures.FailedRecords;
import sparkkpl.failures.RowRejected;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.metrics.ExecutorTotals;
import sparkkpl.metrics.WriteSummary;
import sparkkpl.producer.TaskProducers;
import sparkkpl.records.RecordAssembler;

/**
 * Writes one Spark partition: each row becomes a record ({@link RecordAssembler}) sent through the
 * task's producers ({@link TaskProducers}). It commits only once Kinesis has acknowledged or finally
 * failed every record this task added; what failed is handled by {@link FailedRecords} (the task fails,
 * or the record is counted and dead-lettered). Every failure leaves the task tagged for Python
 * ({@link SinkTaskFailedException}).
 */
final class KplDataWriter implements DataWriter<InternalRow> {
    private final int partitionId;
    private final RecordAssembler assembler;
    private final FailedRecords failures;
    private final TaskProducers producers;
    /** Null off a Spark task (unit tests). */
    private final TaskContext task = TaskContext.get();
    private long rowNumber;
    private long skipped;
    /** Spark 4.0+: writeAll waited for every record's acknowledgement after the last row; commit need not again. */
    private boolean acknowledgedInWriteAll;
    private boolean committed;

    KplDataWriter(int partitionId, RecordAssembler assembler, FailedRecords failures, TaskProducers producers) {
        this.partitionId = partitionId;
        this.assembler = assembler;
        this.failures = failures;
        this.producers = producers;
    }

    @Override
    public void write(InternalRow row) throws IOException {
        try {
            writeRow(row);
        } catch (IOException | RuntimeException e) {
            throw SinkTaskFailedException.named(e, partitionId, producers.acks());
        }
    }

    private void writeRow(InternalRow row) throws IOException {
        // Spark's interrupt alone does not stop this loop: while the queue has room nothing here
        // blocks, and an input such as a cached table does not check for kills itself.
        if (task != null && task.isInterrupted()) {
            throw new TaskKilledException("cancelled before row " + (rowNumber + 1) + " of Spark partition "
                + partitionId + "; the rows before it may still reach Kinesis");
        }
        rowNumber++;
        producers.handOverFailures();
        KinesisRecord record;
        try {
            record = assembler.assemble(row, rowNumber);
        } catch (RowRejected e) {
            failures.handle(e.failure());
            return;
        }
        if (record == null) {
            skipped++;
        } else {
            producers.add(record, rowNumber);
        }
    }

    /**
     * Spark 4.0 and later hand the task's rows here, then take {@link #currentMetricsValues()} a last time before
     * {@link #commit()}: waiting for Kinesis's acknowledgements here lets that last reading, which the SQL tab
     * shows, count every record acknowledged. Spark 3.5 calls {@link #write} row by row and leaves the wait to
     * the commit, after its last reading.
     */
    @Override
    public void writeAll(Iterator<InternalRow> rows) throws IOException {
        while (rows.hasNext()) {
            write(rows.next());
        }
        try {
            producers.finish();
            acknowledgedInWriteAll = true;
        } catch (IOException | RuntimeException e) {
            throw SinkTaskFailedException.named(e, partitionId, producers.acks());
        }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        try {
            if (!acknowledgedInWriteAll) {
                producers.finish();
            }
            producers.handOverFailures();
            failures.commit();
            committed = true;
            return summary();
        } catch (IOException | RuntimeException e) {
            throw SinkTaskFailedException.named(e, partitionId, producers.acks());
        }
    }

    private WriteSummary summary() {
        return WriteSummary.ofTask(producers.acks(), failures.count(), skipped, producers.unaggregated(),
            producers.queueStats(), producers.streamsMet(), committed);
    }

    /** Polled by Spark while the task runs and at its end, for the Spark UI. */
    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return summary().taskMetrics();
    }

    /**
     * Delivers the rows accepted before the failure, as the error promises (records already added cannot
     * be recalled from the KPL); a killed task only sends them, and its error says they may still arrive.
     */
    @Override
    public void abort() throws IOException {
        try {
            producers.deliverAccepted(task != null && task.isInterrupted());
        } finally {
            failures.abort();
        }
    }

    @Override
    public void close() {
        ExecutorTotals.taskEnded(summary());
        producers.release();
    }
}
