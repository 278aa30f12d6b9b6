package sparkkpl.producer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import sparkkpl.config.WriteConfig;

/**
 * Starts producers and lets each close as soon as it exists, while busy threads load every CPU, so
 * that a producer may close while its daemon is still being launched. Prints how many daemon
 * processes and pipe folders (under {@code nativeDir}) are left once the closes are done. Driven by
 * tests/sink/daemon/test_producer_lifecycle.py.
 *
 * <p>Arguments: producers, busy threads, then options as name=value, {@code nativeDir} among them.
 */
public final class QuickCloseMain {
    private static final long SETTLE_MS = 60_000;

    private QuickCloseMain() {}

    public static void main(String[] args) throws Exception {
        int producers = Integer.parseInt(args[0]);
        int busyThreads = Integer.parseInt(args[1]);
        Map<String, String> options = MainOptions.from(args, 2);
        for (int i = 0; i < busyThreads; i++) {
            Thread spinner = new Thread(QuickCloseMain::spin, "busy-" + i);
            spinner.setDaemon(true);
            spinner.start();
        }
        for (int i = 0; i < producers; i++) {
            // A distinct configuration makes a distinct producer.
            options.put("RecordTtl", String.valueOf(30_000 + i));
            ProducerRegistry.release(ProducerRegistry.acquire(WriteConfig.read(Map.of(), options).options().producer()));
        }
        Path pipeFolders = Paths.get(options.get("nativeDir"));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
        long left = daemons();
        while ((left > 0 || pipeFolders(pipeFolders) > 0) && System.nanoTime() < deadline) {
            Thread.sleep(200);
            left = daemons();
        }
        System.out.println("daemons left " + left + ", pipe folders left " + pipeFolders(pipeFolders));
        try (Stream<Path> tree = Files.walk(pipeFolders)) {
            tree.filter(path -> path.toString().contains("producer-")).forEach(path -> System.out.println("  " + path));
        }
    }

    private static long pipeFolders(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(entry -> entry.getFileName().toString().startsWith("producer-")).count();
        }
    }

    private static long daemons() {
        return daemonProcesses().size();
    }

    /** This JVM's KPL daemons. */
    static List<ProcessHandle> daemonProcesses() {
        return ProcessHandle.current().children()
            .filter(child -> child.info().command().orElse("").endsWith("kinesis_producer"))
            .toList();
    }

    private static void spin() {
        long x = 0;
        while (true) {
            x += System.nanoTime() % 7;
            if (x == 42) {
                Thread.yield();
            }
        }
    }
}
