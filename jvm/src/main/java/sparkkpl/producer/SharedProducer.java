package sparkkpl.producer;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.kinesis.producer.DaemonException;
import software.amazon.kinesis.producer.KinesisProducer;
import software.amazon.kinesis.producer.UserRecordResult;
import sparkkpl.natives.DaemonFolder;

/** One KPL producer (one native daemon) shared by every task of an executor JVM, with its cap. */
public final class SharedProducer {
    private static final Logger LOG = LoggerFactory.getLogger(SharedProducer.class);

    private final KinesisProducer kpl;
    private final DaemonFolder folder;
    private final OutstandingLimit limit;
    private final long idleTimeoutMs;
    private final long closeTimeoutMs;
    private final Map<String, String> settings;
    private volatile boolean broken;

    SharedProducer(KinesisProducer kpl, DaemonFolder folder, Map<String, String> settings, long maxRecords,
                   long maxBytes, long idleTimeoutMs, long closeTimeoutMs) {
        this.kpl = kpl;
        this.folder = folder;
        this.settings = settings;
        this.limit = new OutstandingLimit(maxRecords, maxBytes);
        this.idleTimeoutMs = idleTimeoutMs;
        this.closeTimeoutMs = closeTimeoutMs;
    }

    /**
     * Adds one record (row {@code rowNumber} of its task) for {@code acks}' task, first waiting for room under the queue limit.
     *
     * @throws IllegalArgumentException when the KPL refuses the record (its size, its keys)
     * @throws TimeoutException when the queue stayed full for {@code timeoutMs}
     */
    public void add(KinesisRecord record, long rowNumber, TaskAcks acks, TaskQueueStats stats, long timeoutMs)
            throws InterruptedException, TimeoutException {
        long size = recordBytes(record);
        limit.acquire(size, this::flush, TimeUnit.MILLISECONDS.toNanos(timeoutMs), stats);
        ListenableFuture<UserRecordResult> future;
        try {
            future = shielded(() -> kpl.addUserRecord(record.stream(), record.partitionKey(),
                record.explicitHashKey(), ByteBuffer.wrap(record.data())));
        } catch (DaemonException e) {
            // The daemon is gone and the KPL declined to restart it (it does not when one dies
            // soon after starting): this producer can take nothing more.
            broken = true;
            limit.release(size);
            throw e;
        } catch (RuntimeException e) {
            limit.release(size);
            throw e;
        }
        future.addListener(() -> limit.release(size), MoreExecutors.directExecutor());
        acks.track(future, record, rowNumber, size);
    }

    /** The bytes a record puts on the wire: what queueLimitBytes and bytes_written count. */
    public static long recordBytes(KinesisRecord record) {
        String hashKey = record.explicitHashKey();
        return record.data().length + record.partitionKey().length() + (hashKey == null ? 0 : hashKey.length());
    }

    /** Whether the daemon died for good; the registry then starts a new producer for the next task. */
    boolean isBroken() {
        return broken;
    }

    public void flush() {
        shielded(() -> {
            kpl.flush();
            return null;
        });
    }

    /**
     * Calls into the KPL with the thread's interrupt held back, then restores it. The KPL's
     * {@code Daemon.add} takes its queue's lock interruptibly and treats the interrupt as a fatal
     * error: it kills the daemon and may start another behind this producer's back. Spark
     * interrupts task threads when it cancels them.
     */
    private static <T> T shielded(Supplier<T> call) {
        boolean interrupted = Thread.interrupted();
        try {
            return call.get();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    OutstandingLimit.Usage usage() {
        return limit.usage();
    }

    long idleTimeoutMs() {
        return idleTimeoutMs;
    }

    /** What it runs with, by config key, secrets masked (see {@code WriteConfig.producerSettings}). */
    public Map<String, String> settings() {
        return settings;
    }

    /** Live figures, readable from the driver through {@code sc._jvm}. */
    public Map<String, Long> stats() {
        OutstandingLimit.Usage usage = limit.usage();
        Map<String, Long> stats = new LinkedHashMap<>();
        stats.put("outstandingRecords", usage.records());
        stats.put("outstandingBytes", usage.bytes());
        stats.put("peakOutstandingRecords", usage.peakRecords());
        stats.put("peakOutstandingBytes", usage.peakBytes());
        stats.put("kplOutstandingRecords", (long) kpl.getOutstandingRecordsCount());
        return stats;
    }

    /**
     * Flushes, waits a bounded time for every outstanding record, then stops the daemon, whatever
     * the flush met. Records still outstanding at the deadline are reported, never dropped silently.
     */
    void close() {
        try {
            long left = limit.awaitEmpty(this::flush, TimeUnit.MILLISECONDS.toNanos(closeTimeoutMs));
            if (left > 0) {
                LOG.error("Closing the KPL producer with {} records still unacknowledged after {} ms; "
                    + "their tasks have already failed or will not commit", left, closeTimeoutMs);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (DaemonException e) {
            LOG.warn("The KPL daemon was already gone when its producer closed: {}", e.getMessage());
        } finally {
            folder.destroy(kpl::destroy);
        }
    }
}
