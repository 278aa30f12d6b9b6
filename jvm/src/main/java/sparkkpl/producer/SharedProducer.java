package sparkkpl.producer;

import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.Uninterruptibles;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.DaemonException;
import software.amazon.kinesis.producer.IKinesisProducer;
import software.amazon.kinesis.producer.UserRecordResult;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.natives.DaemonFolder;
import sparkkpl.util.OffTaskThread;
import sparkkpl.util.SharedPool;

/**
 * One KPL producer (one native daemon) shared by every task of an executor JVM, with its cap.
 *
 * <p>When its daemon dies (killed, out of memory), the KPL fails every outstanding record and starts
 * a new daemon; for about a second meanwhile every add throws {@link DaemonException}. Adds wait that
 * out rather than fail, and only a KPL that accepts nothing for {@link #RESTART_WAIT_MS} counts as
 * given up ({@link #isBroken}). Before each wait the daemon's binary is put back in place if it has
 * gone (a tmp cleaner), or the KPL would relaunch a missing file once a second forever.
 *
 * <p>A daemon that predicts shards (the KPL's aggregation on: its own aggregates, or the tasks' under
 * aggregation=executor) keeps one shard map per stream name for its life. A stream deleted and created
 * again under the name starts its shard ids over with other ranges: that daemon would aggregate by the
 * old map, and re-send byte for byte every record stored in a shard it does not know. So the producer
 * remembers the incarnation (creation time) of each stream its tasks write to, and once a task meets a
 * later one it is {@link #admits outlived}: the pool gives the next tasks a new producer, and closes
 * this one, once drained, when its last holder releases it.
 */
public final class SharedProducer implements SharedPool.Pooled {
    private static final Logger LOG = LoggerFactory.getLogger(SharedProducer.class);
    /** Where every call into the KPL runs: see {@link #callKpl}. */
    private static final ExecutorService KPL_CALLS = OffTaskThread.newPool("spark-kpl-calls");
    /** How long adds wait for the KPL to replace a dead daemon before the producer counts as broken. */
    static final long RESTART_WAIT_MS = 15_000;
    private static final long RESTART_POLL_MS = 50;
    /** The streams one daemon may meet before the producer is replaced for the next tasks ({@link #retire}). */
    static final int MAX_STREAMS_MET = 1_024;

    private final IKinesisProducer kpl;
    private final DaemonFolder folder;
    private final Runnable keepDaemonInPlace;
    private final OutstandingLimit limit;
    private final long idleTimeoutMs;
    private final long closeTimeoutMs;
    private final Map<String, String> settings;
    /** Its streams' shard maps, for the tasks that build aggregates: listed with its endpoint and credentials. */
    private final ShardMaps shardMaps;
    /** Whether its daemon predicts shards, from a map per stream name it keeps for its life. */
    private final boolean predictsShards;
    /** The creation time of each stream its tasks write to, where its daemon predicts shards. */
    private final Map<String, String> incarnations = new ConcurrentHashMap<>();
    private final FlushPacing flushPacing = new FlushPacing();
    private volatile boolean broken;
    /** Set once a task met a stream created again since this producer's daemon met it, or too many streams. */
    private volatile boolean outlived;

    /**
     * What a started KPL producer comes with.
     *
     * @param keepInPlace puts the daemon's binary back where the KPL runs it from, if it is gone
     * @param shardMaps its streams' shard maps, listed with its endpoint and credentials
     * @param predictsShards whether its daemon predicts shards (the KPL's aggregation is on)
     * @param settings what it runs with, by config key, secrets masked
     */
    record Daemon(IKinesisProducer kpl, DaemonFolder folder, Runnable keepInPlace, ShardMaps shardMaps,
                  boolean predictsShards, Map<String, String> settings) {}

    /**
     * How much it holds and for how long.
     *
     * @param queueLimit most user records outstanding
     * @param queueLimitBytes most bytes of user records outstanding
     * @param recordTtlMs the KPL's {@code RecordTtl}, which the outstanding budget keeps records' waits well inside
     * @param idleTimeoutMs how long the pool keeps it unused
     * @param closeTimeoutMs how long closing waits for its outstanding records
     */
    record Limits(long queueLimit, long queueLimitBytes, long recordTtlMs, long idleTimeoutMs, long closeTimeoutMs) {}

    SharedProducer(Daemon daemon, Limits limits) {
        this.kpl = daemon.kpl();
        this.shardMaps = daemon.shardMaps();
        this.predictsShards = daemon.predictsShards();
        this.folder = daemon.folder();
        this.keepDaemonInPlace = daemon.keepInPlace();
        this.settings = daemon.settings();
        this.limit = new OutstandingLimit(
            DrainBudget.Policy.following(limits.queueLimit(), limits.queueLimitBytes(), limits.recordTtlMs()));
        this.idleTimeoutMs = limits.idleTimeoutMs();
        this.closeTimeoutMs = limits.closeTimeoutMs();
    }

    /** Reserves room for a KPL record's task records under the queue limit if there is some now. */
    boolean tryReserve(KplRecord record, TaskQueueStats stats) {
        return limit.tryAcquire(record.lane(), record.count(), record.bytes(), stats);
    }

    /**
     * Reserves room for a KPL record's task records, flushing and waiting while the queue limit is reached.
     *
     * @throws TimeoutException when the queue stayed full for {@code timeoutNanos}
     */
    void reserve(KplRecord record, long timeoutNanos, TaskQueueStats stats) throws InterruptedException, TimeoutException {
        limit.acquire(record.lane(), record.count(), record.bytes(), this::flushForBlockedTasks, timeoutNanos, stats);
    }

    /** Gives back the room of a reserved KPL record that will not be added. */
    void unreserve(KplRecord record) {
        limit.release(record.lane(), record.count(), record.bytes());
    }

    /**
     * Adds a KPL record, whose task records hold reserved room, for {@code acks}' task; call on a
     * {@link #callKpl} thread only. {@code onAnswered} runs once Kinesis has given it its final answer,
     * before the task's acknowledgements count it. Their room is given back when Kinesis acknowledges (the budget
     * follows that rate) or finally fails it, or now if the KPL refuses it.
     *
     * @throws IllegalArgumentException when the KPL refuses the record (its size, its keys)
     */
    void add(KplRecord record, TaskAcks acks, Runnable onAnswered) {
        boolean released = false;
        try {
            long addedAt = System.nanoTime();
            ListenableFuture<UserRecordResult> future = addToKpl(record.sent());
            future.addListener(() -> settled(record, future, addedAt), MoreExecutors.directExecutor());
            future.addListener(onAnswered, MoreExecutors.directExecutor());
            released = true;
            acks.track(future, record, this);
        } finally {
            // Whatever the KPL threw (an Error too), a record it did not take gives its room back.
            if (!released) {
                unreserve(record);
            }
        }
    }

    private void settled(KplRecord record, ListenableFuture<UserRecordResult> future, long addedAt) {
        UserRecordResult result = acknowledged(future);
        if (result != null) {
            limit.acknowledged(record.lane(), record.count(), record.bytes(), System.nanoTime() - addedAt,
                TaskAcks.throttles(result.getAttempts()) > 0);
        } else {
            unreserve(record);
        }
    }

    /** Kinesis's answer if it stored the record; null otherwise. */
    private static UserRecordResult acknowledged(ListenableFuture<UserRecordResult> done) {
        try {
            UserRecordResult result = Futures.getDone(done);
            return result.isSuccessful() ? result : null;
        } catch (ExecutionException | CancellationException e) {
            return null; // the record's task learns why from its own callback (TaskAcks)
        }
    }

    /** Adds to the KPL, waiting while it replaces a dead daemon; see the class comment. */
    private ListenableFuture<UserRecordResult> addToKpl(KinesisRecord record) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RESTART_WAIT_MS);
        while (true) {
            try {
                return kpl.addUserRecord(record.stream(), record.partitionKey(), record.explicitHashKey(),
                    ByteBuffer.wrap(record.data()));
            } catch (DaemonException e) {
                keepDaemonInPlace.run();
                if (System.nanoTime() > deadline) {
                    broken = true;
                    throw new DaemonException("The KPL accepted no record for " + RESTART_WAIT_MS
                        + " ms after its daemon stopped (" + e.getMessage() + "); this producer is replaced for "
                        + "the next tasks");
                }
                Uninterruptibles.sleepUninterruptibly(RESTART_POLL_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Runs {@code work} on a thread Spark never interrupts and waits for it. The KPL's
     * {@code Daemon.add} takes its queue's lock interruptibly and treats an interrupt as fatal: it
     * kills the daemon, fails every outstanding record of every task sharing it, and starts another.
     * Spark interrupts a task's thread when it cancels the task (a cancelled job, a speculative copy
     * that lost), and a task adding rows is inside the KPL most of the time.
     */
    static <T> T callKpl(Callable<T> work) {
        return OffTaskThread.call(KPL_CALLS, work);
    }


    /**
     * Before a task uses the producer: a daemon binary that has gone is placed again, and a daemon the
     * KPL is restarting is waited for, so that the task's first records do not go to a daemon that is
     * about to fail. Returns at once while a daemon runs.
     */
    @Override
    public void awaitReady() {
        keepDaemonInPlace.run();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(RESTART_WAIT_MS);
        while (folder.daemons().isEmpty() && System.nanoTime() < deadline) {
            Uninterruptibles.sleepUninterruptibly(RESTART_POLL_MS, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Whether a task may send records for this incarnation of the stream through this producer: its
     * daemon predicts no shards, or has met no other incarnation of the stream, or only a later one
     * (the task's write was overtaken by the stream's re-creation and fails at its commit). A task
     * that meets a later incarnation marks the producer outlived, and must take another.
     */
    public boolean admits(StreamDescription stream) {
        if (!predictsShards || stream.created() == null) {
            return true;
        }
        String seen = incarnations.get(stream.stream());
        if (seen == null && incarnations.size() >= MAX_STREAMS_MET) {
            retire(stream);
            return true;
        }
        seen = seen != null ? seen : incarnations.putIfAbsent(stream.stream(), stream.created());
        if (seen == null || seen.equals(stream.created()) || !StreamDescription.createdLater(stream.created(), seen)) {
            return true;
        }
        if (!outlived) {
            outlived = true;
            LOG.info("Stream '{}' was created again (at {}; this KPL producer's daemon met the one created at {}): "
                + "the next tasks get a new producer, whose daemon knows only the new stream's shards", stream.stream(),
                stream.created(), seen);
        }
        return false;
    }

    /**
     * Replaces the producer for the next tasks once its daemon has met {@link #MAX_STREAMS_MET} streams, which
     * keeps what it and its daemon remember bounded however many stream names a long query meets. The tasks
     * holding it finish on it: the stream is admitted unremembered, as the pool hands this producer to no new
     * task.
     */
    private void retire(StreamDescription stream) {
        if (!outlived) {
            outlived = true;
            LOG.info("This KPL producer's daemon has met {} streams; '{}' and the next tasks get a new producer",
                MAX_STREAMS_MET, stream.stream());
        }
    }

    /**
     * Whether new tasks need another producer: the KPL gave up on its daemon, or the daemon holds the
     * shard map of a stream that has been created again since ({@link #admits}), or of too many streams.
     */
    @Override
    public boolean isBroken() {
        return broken || outlived;
    }

    /**
     * A flush for the tasks at commit, the asking one's last aggregates or those of the tasks committing
     * after it, unless the producer flushed too recently for what a flush costs its daemon at the shards
     * its tasks have listed ({@link FlushPacing}). The first flush of a commit after a quiet spell goes
     * out at once; in a run of commits, one flush serves every task whose records it finds.
     */
    void flushForCommits() {
        flushUnlessFlushedWithin(FlushPacing.laterTasksSpacingNanos(shardMaps.shardsListed()));
    }

    /** A flush for tasks waiting for room or for the last acknowledgements, unless one came within 100 ms. */
    void flushForBlockedTasks() {
        flushUnlessFlushedWithin(FlushPacing.BLOCKED_SPACING_NANOS);
    }

    /**
     * Asks the KPL to send what it buffers, if no flush came within {@code spacingNanos}. While it replaces a
     * dead daemon there is nothing to send: the dead daemon's records come back as failed futures, which is
     * where their tasks learn of it.
     */
    private void flushUnlessFlushedWithin(long spacingNanos) {
        if (!flushPacing.claim(System.nanoTime(), spacingNanos)) {
            return;
        }
        callKpl(() -> {
            try {
                kpl.flush();
            } catch (DaemonException e) {
                LOG.debug("No flush while the KPL restarts its daemon: {}", e.getMessage());
            }
            return null;
        });
    }

    OutstandingLimit.Usage usage() {
        return limit.usage();
    }

    @Override
    public long idleTimeoutMs() {
        return idleTimeoutMs;
    }

    public ShardMaps shardMaps() {
        return shardMaps;
    }

    /** What it runs with, by config key, secrets masked (see {@code ProducerSpec.settings}). */
    public Map<String, String> settings() {
        return settings;
    }

    /** Live figures, which the driver shows in its producerStats report. */
    public Map<String, Long> stats() {
        OutstandingLimit.Usage usage = limit.usage();
        Map<String, Long> stats = new LinkedHashMap<>();
        stats.put("outstandingRecords", usage.records());
        stats.put("outstandingBytes", usage.bytes());
        stats.put("peakOutstandingRecords", usage.peakRecords());
        stats.put("peakOutstandingBytes", usage.peakBytes());
        stats.put("budgetRecords", usage.budgetRecords());
        stats.put("budgetBytes", usage.budgetBytes());
        stats.put("budgetLanes", (long) usage.lanes());
        stats.put("kplOutstandingRecords", (long) kpl.getOutstandingRecordsCount());
        return stats;
    }

    /**
     * Flushes, waits a bounded time for every outstanding record, then stops the daemon, whatever
     * the flush met. Records still outstanding at the deadline are reported, never dropped silently.
     */
    @Override
    public void close() {
        try {
            long left = limit.awaitEmpty(this::flushForBlockedTasks, TimeUnit.MILLISECONDS.toNanos(closeTimeoutMs));
            if (left > 0) {
                LOG.error("Closing the KPL producer with {} records still unacknowledged after {} ms; "
                    + "their tasks have already failed or will not commit", left, closeTimeoutMs);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (DaemonException e) {
            LOG.warn("The KPL daemon was already gone when its producer closed: {}", e.getMessage());
        } finally {
            try {
                folder.destroy(kpl::destroy);
            } finally {
                shardMaps.close();
            }
        }
    }
}
