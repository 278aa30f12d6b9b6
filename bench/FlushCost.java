// What a KPL flush costs the daemon once it has met SHARDS shards: the daemon's CPU over 10 s with no
// flush, then over 10 s of a flush every PERIOD_US microseconds, each printed as a "RESULT" line.
// java -cp <sink jar>:<Spark's jars> bench/FlushCost.java STREAM SHARDS PERIOD_US KEY=VALUE...
// KEY=VALUE are a write's options; the KPL gets what the sink's producer gets from them
// (aggregation=executor unless they say otherwise: the KPL's aggregator keeps a reducer per shard met).
// Run by bench/flush_cost.py, which hosts the endpoint.
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import sparkkpl.config.WriteConfig;
import sparkkpl.shaded.com.google.common.util.concurrent.ListenableFuture;
import sparkkpl.shaded.software.amazon.kinesis.producer.KinesisProducer;
import sparkkpl.shaded.software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.shaded.software.amazon.kinesis.producer.UserRecordResult;

public class FlushCost {
    static final long PHASE_NANOS = 10_000_000_000L;

    /** CPU ticks (1/100 s) of this JVM's child processes: the KPL daemon. */
    static long daemonTicks() throws Exception {
        long total = 0;
        for (ProcessHandle child : ProcessHandle.current().descendants().toList()) {
            String stat = Files.readString(Path.of("/proc/" + child.pid() + "/stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            total += Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        String stream = args[0];
        int shards = Integer.parseInt(args[1]);
        long periodMicros = Long.parseLong(args[2]);
        Map<String, String> given = new TreeMap<>();
        for (String kv : Arrays.copyOfRange(args, 3, args.length)) {
            int eq = kv.indexOf('=');
            given.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        KinesisProducerConfiguration config = WriteConfig.read(Map.of(), given).options().producer().producerConfiguration();
        KinesisProducer kpl = new KinesisProducer(config);
        kpl.addUserRecord(stream, "w", ByteBuffer.wrap("w".getBytes())).get();
        // One record per shard (an explicit hash key inside each), so the aggregator has met them all.
        BigInteger step = BigInteger.ONE.shiftLeft(128).divide(BigInteger.valueOf(shards));
        List<ListenableFuture<UserRecordResult>> sent = new ArrayList<>();
        for (int i = 0; i < shards; i++) {
            String hashKey = step.multiply(BigInteger.valueOf(i)).add(BigInteger.ONE).toString();
            sent.add(kpl.addUserRecord(stream, "k", hashKey, ByteBuffer.wrap("x".getBytes())));
        }
        kpl.flushSync();
        for (ListenableFuture<UserRecordResult> record : sent) {
            record.get();
        }
        for (long period : new long[] {0, periodMicros}) {
            long ticks = daemonTicks();
            long started = System.nanoTime();
            long flushes = 0;
            while (System.nanoTime() - started < PHASE_NANOS) {
                if (period > 0) {
                    kpl.flush();
                    flushes++;
                    Thread.sleep(period / 1000, (int) (period % 1000) * 1000);
                } else {
                    Thread.sleep(10);
                }
            }
            ticks = daemonTicks() - ticks;
            System.out.printf("RESULT {\"shards\": %d, \"period_us\": %d, \"flushes\": %d, \"daemon_cpu_ms\": %d}%n",
                shards, period, flushes, ticks * 10);
        }
        kpl.destroy();
    }
}
