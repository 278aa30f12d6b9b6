package sparkkpl.spark;

import com.google.common.util.concurrent.Uninterruptibles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import sparkkpl.controlplane.StreamLook;
import sparkkpl.metrics.ProgressFigures;
import sparkkpl.metrics.WriteSummary;
import sparkkpl.streaming.CommittedBatches;
import sparkkpl.util.Durations;
import sparkkpl.util.OffTaskThread;

/**
 * One micro-batch's write of a Structured Streaming query: Spark makes one per micro-batch, and what
 * lasts the query (its resolution, look and committed batches) comes from its table ({@link QueryWrite}).
 * Each task commits once Kinesis acknowledged its records (the counterpart of Flink's flush at a
 * checkpoint); the driver then records the batch in {@link CommittedBatches}, and a batch Spark runs
 * again after a restart that is already there is not sent again.
 */
final class KplStreamingWrite implements StreamingWrite {
    private static final Logger LOG = LoggerFactory.getLogger(KplStreamingWrite.class);
    /** Writes micro-batches' markers while the driver checks their stream. */
    private static final ExecutorService BATCH_LOG = OffTaskThread.newPool("spark-kpl-batch-log");

    /** The query's write as resolved: each micro-batch's plan is made from it and the stream's look. */
    private final ResolvedWrite write;
    private final CommittedBatches committed;
    private final StreamLook look;
    /** The query's figures for its progress reports, which each committed micro-batch adds to. */
    private final ProgressFigures progress;
    /** The plan of the micro-batch being written: its tasks' streams are checked at its commit. */
    private WritePlan current;
    /** How log lines name the query: by the name writeStream gave it, if any. */
    private final String query;
    /** How long the driver took to plan the micro-batch being written, for its commit's log line. */
    private long planningNanos;
    /**
     * The marker of the batch after the last committed one, written (not published) while the tasks of the
     * micro-batch being written run: that batch is almost always the one that commits next.
     */
    private EarlyMarker nextMarker;

    private record EarlyMarker(long batchId, CompletableFuture<CommittedBatches.Prepared> prepared) {}

    /** @param look the query's, which its micro-batches reuse ({@link QueryWrite}) */
    KplStreamingWrite(ResolvedWrite write, CommittedBatches committed, StreamLook look, ProgressFigures progress) {
        this.write = write;
        this.committed = committed;
        this.progress = progress;
        this.look = look;
        String name = write.options().query().queryName();
        this.query = name != null ? "query '" + name + "'" : "the query";
    }

    /**
     * The micro-batch's plan: it reads the last committed batch afresh, and the stream's description
     * when the query's last is older than {@link StreamLook#MICRO_BATCH_REUSE_NANOS}.
     */
    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        long started = System.nanoTime();
        try {
            current = write.plan(look);
            KplPlugin.adviseWhereMissing(current);
            long last = committed.last();
            KplStreamingWriterFactory factory = new KplStreamingWriterFactory(current, last);
            nextMarker = new EarlyMarker(last + 1, CompletableFuture.supplyAsync(() -> prepareMarker(last + 1), BATCH_LOG));
            planningNanos = System.nanoTime() - started;
            return factory;
        } catch (IOException e) {
            throw new UncheckedIOException("Reading the kpl sink's committed batches in " + committed.directory(), e);
        }
    }

    @Override
    public boolean useCommitCoordinator() {
        return true;
    }

    /**
     * Every task committed, so Kinesis acknowledged every record: the stream is checked (it must be the
     * one described), and the batch's marker, written under a temporary name while the tasks ran (or
     * now, during the check, for a batch other than the one after the last committed), is published only
     * if the check passed; the two took a round trip and a synced file write one after the other.
     */
    @Override
    public void commit(long batchId, WriterCommitMessage[] messages) {
        WriteSummary total = WriteSummary.sum(messages);
        long started = System.nanoTime();
        CompletableFuture<CommittedBatches.Prepared> marker = markerOf(batchId);
        current.confirmUnchanged(look, total.streamsMet());
        long checked = System.nanoTime();
        try {
            CommittedBatches.Prepared prepared = Uninterruptibles.getUninterruptibly(marker);
            if (prepared != null) {
                committed.publish(prepared);
            }
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(e.getCause());
        } catch (IOException e) {
            throw batchLogFailed(batchId, e);
        }
        progress.committed(total);
        if (LOG.isInfoEnabled()) {
            LOG.info("Kinesis micro-batch {} of {} committed: {} (planned in {} ms; at commit, stream checked in {} ms, "
                + "batch recorded {} ms later)", batchId, query, total.toMap(), Durations.ms(planningNanos),
                Durations.ms(checked - started), Durations.ms(System.nanoTime() - checked));
        }
    }

    /** The batch's marker, being written: the one written while its tasks ran if that is this batch's. */
    private CompletableFuture<CommittedBatches.Prepared> markerOf(long batchId) {
        EarlyMarker early = nextMarker;
        nextMarker = null;
        if (early != null && early.batchId() == batchId) {
            return early.prepared();
        }
        return CompletableFuture.supplyAsync(() -> prepareMarker(batchId), BATCH_LOG);
    }

    /** The batch's marker, written but not published; null for a batch already recorded (a replay). */
    private CommittedBatches.Prepared prepareMarker(long batchId) {
        try {
            return batchId > committed.last() ? committed.prepare(batchId) : null;
        } catch (IOException e) {
            throw batchLogFailed(batchId, e);
        }
    }

    private UncheckedIOException batchLogFailed(long batchId, IOException e) {
        return new UncheckedIOException("Recording micro-batch " + batchId + " as committed in " + committed.directory(), e);
    }

    @Override
    public void abort(long batchId, WriterCommitMessage[] messages) {
        LOG.warn("Kinesis micro-batch {} of {} aborted; records its committed tasks sent remain in the stream", batchId,
            query);
    }
}
