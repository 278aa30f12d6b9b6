// The KPL driven from a plain Java loop, outside Spark: the KPL's ceiling on this machine.
// java -cp build/libs/spark-kpl-0.1.0.jar bench/KplLoop.java STREAM RECORDS SIZE RUNS KEY=VALUE...
// KEY=VALUE are a write's options (KPL properties, aggregation=kpl): the loop's KPL gets exactly the
// configuration the sink's per-record producer gets from them (ProducerSpec.producerConfiguration), and
// prints it first as {"kpl_settings": ..., "kpl_settings_set": ...} (the latter: what
// differs from the KPL's defaults). Same records as the benchmark's DataFrame: data = "<i>-"
// right-padded with 'x' to SIZE bytes, partition key "k<i>". Outstanding records capped as the sink's
// defaults (SinkOption) so the loop cannot outrun memory. Before each timed run it prints
// {"ready": run} and waits for a line on stdin (the benchmark reads the endpoint's counters then);
// after it, one JSON line with the run's figures.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import sparkkpl.config.KplProperties;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteConfig;
import sparkkpl.util.JsonText;
import sparkkpl.shaded.com.google.common.util.concurrent.FutureCallback;
import sparkkpl.shaded.com.google.common.util.concurrent.Futures;
import sparkkpl.shaded.com.google.common.util.concurrent.ListenableFuture;
import sparkkpl.shaded.com.google.common.util.concurrent.MoreExecutors;
import sparkkpl.shaded.software.amazon.kinesis.producer.KinesisProducer;
import sparkkpl.shaded.software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.shaded.software.amazon.kinesis.producer.UserRecordResult;

public class KplLoop {
    /** The sink's default queue caps, read from its declarations. */
    static final long CAP_RECORDS = Long.parseLong(SinkOption.QUEUE_LIMIT.defaultValue().orElseThrow());
    static final long CAP_BYTES = Long.parseLong(SinkOption.QUEUE_LIMIT_BYTES.defaultValue().orElseThrow());
    // While at the cap, the loop flushes the KPL as often as the sink's waiting tasks do
    // (OutstandingLimit.FLUSH_SPACING_NANOS, package-private there): a flush every millisecond
    // cut the KPL's aggregates to 18 rows where the sink's producer filled 274.
    static final long FLUSH_SPACING_NANOS = 100_000_000L;

    public static void main(String[] args) throws Exception {
        String stream = args[0];
        int records = Integer.parseInt(args[1]), size = Integer.parseInt(args[2]), runs = Integer.parseInt(args[3]);
        KinesisProducerConfiguration config = sinkConfiguration(Arrays.copyOfRange(args, 4, args.length));
        printSettings(config);
        BufferedReader orchestrator = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        KinesisProducer producer = new KinesisProducer(config);
        try {
            byte[] pad = new byte[size];
            Arrays.fill(pad, (byte) 'x');
            // warm-up: one record, so the shard map is loaded (as the Spark runs' warm-up write)
            producer.addUserRecord(stream, "warm-up", ByteBuffer.wrap("warm-up".getBytes())).get();
            for (int run = 0; run < runs; run++) {
                System.out.printf("{\"ready\": %d}%n", run);
                System.out.flush();
                orchestrator.readLine();
                AtomicLong outRecords = new AtomicLong(), outBytes = new AtomicLong();
                AtomicLong ok = new AtomicLong(), failed = new AtomicLong();
                long blocked = 0;
                long lastFlush = System.nanoTime() - FLUSH_SPACING_NANOS;
                long start = System.nanoTime();
                double wallStart = System.currentTimeMillis() / 1000.0;
                for (int i = 0; i < records; i++) {
                    byte[] data = pad.clone();
                    byte[] head = (i + "-").getBytes(StandardCharsets.UTF_8);
                    System.arraycopy(head, 0, data, 0, Math.min(head.length, size));
                    while (outRecords.get() >= CAP_RECORDS || outBytes.get() + size > CAP_BYTES) {
                        if (System.nanoTime() - lastFlush >= FLUSH_SPACING_NANOS) {
                            producer.flush();
                            lastFlush = System.nanoTime();
                        }
                        Thread.sleep(1);
                        blocked++;
                    }
                    outRecords.incrementAndGet();
                    outBytes.addAndGet(size);
                    ListenableFuture<UserRecordResult> f = producer.addUserRecord(stream, "k" + i, ByteBuffer.wrap(data));
                    Futures.addCallback(f, new FutureCallback<UserRecordResult>() {
                        public void onSuccess(UserRecordResult r) {
                            (r.isSuccessful() ? ok : failed).incrementAndGet();
                            outRecords.decrementAndGet(); outBytes.addAndGet(-size);
                        }
                        public void onFailure(Throwable t) {
                            failed.incrementAndGet();
                            outRecords.decrementAndGet(); outBytes.addAndGet(-size);
                        }
                    }, MoreExecutors.directExecutor());
                }
                producer.flush();
                while (ok.get() + failed.get() < records) Thread.sleep(1);
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("{\"run\": %d, \"records\": %d, \"failed\": %d, \"seconds\": %.4f, \"wall_start\": %.3f, \"blocked_sleeps\": %d}%n",
                        run, ok.get(), failed.get(), seconds, wallStart, blocked);
                System.out.flush();
            }
        } finally {
            producer.flushSync();
            producer.destroy();
        }
    }

    /** The configuration the sink's producer starts from for a write with these options. */
    static KinesisProducerConfiguration sinkConfiguration(String[] options) {
        Map<String, String> given = new TreeMap<>();
        for (String kv : options) {
            int eq = kv.indexOf('=');
            given.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return WriteConfig.read(Map.of(), given).options().producer().producerConfiguration();
    }

    static void printSettings(KinesisProducerConfiguration config) {
        Map<String, String> used = KplProperties.readBack(config);
        Map<String, String> defaults = KplProperties.readBack(new KinesisProducerConfiguration());
        Map<String, String> set = new TreeMap<>(used);
        set.entrySet().removeIf(e -> e.getValue().equals(defaults.get(e.getKey())));
        System.out.println("{\"kpl_settings\": " + json(used) + ", \"kpl_settings_set\": " + json(set) + "}");
        System.out.flush();
    }

    static String json(Map<String, String> map) {
        StringBuilder out = new StringBuilder("{");
        map.forEach((k, v) ->
            out.append(out.length() > 1 ? ", " : "").append(JsonText.quoted(k)).append(": ").append(JsonText.quoted(v)));
        return out.append('}').toString();
    }
}
