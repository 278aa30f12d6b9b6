package sparkkpl.controlplane;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.util.IdleSweep;
import sparkkpl.util.RemoteCallPool;

/**
 * The driver's descriptions of the streams that only rows name, which every executor asks for through
 * the sink's plugin ({@link DescriptionsFromDriver}) instead of describing them itself: Kinesis allows
 * {@code DescribeStreamSummary} 20 times a second per account, and E executors describing K streams
 * at each look would make E x K calls, where this makes K.
 *
 * <p>A stream is described once per incarnation: at a later look of the driver's, a description younger
 * than {@link ShardMaps#DESCRIPTION_MAX_AGE_NANOS} is confirmed with one {@code ListShards} of one shard
 * for its creation time (Kinesis allows 1,000 a second per stream, not per account), and described
 * again only when that stream has gone or the description is that old (a record distribution strategy
 * may change on a live stream; the KPL's daemon trusts its own description as long).
 *
 * <p>Spark hands every executor's message to the plugin on one thread, so {@link #answer} never waits for
 * Kinesis: it starts the call on the JVM's {@link RemoteCallPool} and answers {@link Pending} until it
 * is done; the executors ask again. One call per stream and look, whatever the number of executors asking.
 *
 * <p>Asks and answers cross Spark's RPC as bytes ({@link #encoded}): Spark decodes a message with its own
 * class loader, which on an executor does not see the sink's jar, and an executor fails for good on a
 * message it cannot decode.
 */
public final class SharedDescriptions {
    /** Through the driver's shared clients; before {@link #DRIVER}, which takes it. */
    private static final Calls DRIVER_CALLS = new Calls() {
        @Override
        public StreamDescription describe(ProducerSpec spec, String stream) throws IOException {
            return DriverClients.withStreamApi(spec, api -> api.describe(stream));
        }

        @Override
        public boolean stillExists(ProducerSpec spec, String stream, String created) throws IOException {
            return DriverClients.withStreamApi(spec, api -> api.stillExists(stream, created));
        }
    };
    /** The driver's, which the sink's plugin answers from. */
    public static final SharedDescriptions DRIVER = new SharedDescriptions(RemoteCallPool::execute, System::nanoTime);
    /** A failed call is answered as failed for this long; the next ask after it starts another. */
    static final long FAILURE_KEPT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** A stream no executor asked for in this long is forgotten, so a query meeting many names keeps flat memory. */
    static final long FORGOTTEN_AFTER_NANOS = 2 * ShardMaps.DESCRIPTION_MAX_AGE_NANOS;

    /** What an executor asks: the stream, for the endpoint and credentials of this spec, for this look. */
    public record Ask(ProducerSpec spec, String stream, String lookId) implements Serializable {}

    /** The driver's answer to an {@link Ask}. */
    public sealed interface Answer extends Serializable permits Described, Failed, Pending {}

    public record Described(StreamDescription description) implements Answer {}

    /** The call failed: the executor sends the stream's rows as it does for a description it could not get. */
    public record Failed(String message) implements Answer {}

    /** Not known yet: ask again. */
    public record Pending() implements Answer {}

    /** What the driver calls Kinesis with: its shared clients, or a fake in tests. */
    interface Calls {
        StreamDescription describe(ProducerSpec spec, String stream) throws IOException;

        boolean stillExists(ProducerSpec spec, String stream, String created) throws IOException;
    }

    private record Key(ProducerSpec spec, String stream) {}

    /** One stream's description, the look it was last confirmed for, and the call under way or last made. */
    private static final class Entry {
        StreamDescription description;
        long describedAt;
        String confirmedFor;
        CompletableFuture<Answer> call;
        String callFor;
        long callEndedAt;
        long askedAt;
    }

    private final Map<Key, Entry> entries = new ConcurrentHashMap<>();
    private final Calls calls;
    private final Executor pool;
    private final LongSupplier nanoClock;
    /** Forgets, once a minute, the streams no executor asked for lately. */
    private final IdleSweep unasked;

    SharedDescriptions(Executor pool, LongSupplier nanoClock) {
        this(DRIVER_CALLS, pool, nanoClock);
    }

    SharedDescriptions(Calls calls, Executor pool, LongSupplier nanoClock) {
        this.calls = calls;
        this.pool = pool;
        this.nanoClock = nanoClock;
        this.unasked = new IdleSweep(TimeUnit.MINUTES.toNanos(1), nanoClock.getAsLong());
    }


    /** The plugin's message for {@code ask} or {@code answer}: Java serialization, as bytes. */
    public static byte[] encoded(Serializable message) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(message);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: never
        }
        return bytes.toByteArray();
    }

    /** The ask or answer of a message of {@link #encoded}, its classes found by the sink's class loader. */
    public static <T> T decoded(Object message, Class<T> type) {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream((byte[]) message)) {
            @Override
            protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
                return Class.forName(desc.getName(), false, SharedDescriptions.class.getClassLoader());
            }
        }) {
            return type.cast(in.readObject());
        } catch (IOException | ClassNotFoundException e) {
            throw new IllegalArgumentException("Not a message of the sink's plugin: " + e, e);
        }
    }

    /** The stream as described for the ask's look, or {@link Pending} while the call for it is under way. */
    public Answer answer(Ask ask) {
        long now = nanoClock.getAsLong();
        unasked.sweep(entries.values(), now,
            entry -> now - entry.askedAt >= FORGOTTEN_AFTER_NANOS && (entry.call == null || entry.call.isDone()));
        Entry entry = entries.computeIfAbsent(new Key(ask.spec(), ask.stream()), key -> new Entry());
        CompletableFuture<Answer> call;
        synchronized (entry) {
            entry.askedAt = now;
            if (entry.description != null && ask.lookId().equals(entry.confirmedFor)) {
                return new Described(entry.description);
            }
            boolean endedLongAgo = entry.call != null && entry.call.isDone()
                && now - entry.callEndedAt >= FAILURE_KEPT_NANOS;
            boolean earlierLook = entry.call != null && entry.call.isDone() && !ask.lookId().equals(entry.callFor);
            if (entry.call == null || endedLongAgo || earlierLook) {
                entry.call = new CompletableFuture<>();
                entry.callFor = ask.lookId();
                startCall(ask, entry, entry.call, entry.description, entry.describedAt);
            }
            call = entry.call;
            if (!ask.lookId().equals(entry.callFor)) {
                return new Pending(); // another look's call is under way: this look's starts after it
            }
        }
        return call.getNow(new Pending());
    }

    private void startCall(Ask ask, Entry entry, CompletableFuture<Answer> call, StreamDescription known,
                           long knownAt) {
        pool.execute(() -> {
            Answer answer;
            StreamDescription description = null;
            boolean fresh = false;
            try {
                if (known != null && stillTheStream(ask, known, knownAt)) {
                    description = known;
                } else {
                    description = calls.describe(ask.spec(), ask.stream());
                    fresh = true;
                }
                answer = new Described(description);
            } catch (IOException | RuntimeException e) {
                answer = new Failed(e.getMessage());
            }
            synchronized (entry) {
                if (description != null) {
                    entry.description = description;
                    entry.confirmedFor = ask.lookId();
                    if (fresh) {
                        entry.describedAt = nanoClock.getAsLong();
                    }
                }
                entry.callEndedAt = nanoClock.getAsLong();
            }
            call.complete(answer);
        });
    }

    /** Whether {@code known} still stands: young enough, and its incarnation still has the name. */
    private boolean stillTheStream(Ask ask, StreamDescription known, long knownAt) throws IOException {
        return known.created() != null && nanoClock.getAsLong() - knownAt < ShardMaps.DESCRIPTION_MAX_AGE_NANOS
            && calls.stillExists(ask.spec(), ask.stream(), known.created());
    }

    /** How many streams it holds descriptions of. */
    int size() {
        return entries.size();
    }
}
