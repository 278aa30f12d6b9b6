package sparkkpl.natives;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HexFormat;

/**
 * One contender in tests/sink/daemon/test_native_extraction.py. Writes a ready-file, waits for a go-file, extracts,
 * then prints {@code OK <path> <sha256> interrupted=<bool>} or {@code FAIL <reason>}.
 *
 * <p>Usage: {@code InstallMain ours|kpl <dir|-> <ready-file> <go-file> <interrupt-after-ms|-1>}.
 * {@code ours} calls {@link NativeDaemon#install} ({@code -}: {@link NativeDaemon#defaultDir()}).
 * {@code kpl} runs the stock KPL's own extraction with {@code TempDirectory=<dir>} ({@code -}: the KPL's
 * default): its private {@code extractBinaries}, reached by reflection on an instance whose constructor
 * never ran, so no daemon is started. A non-negative delay interrupts the extracting thread then, as
 * Spark does when it cancels a task. The KPL classes are looked up by name, relocated or not, so this
 * runs against the plain KPL jar and against spark-kpl's shaded jar alike.
 */
public final class InstallMain {

    private static final String[] KPL_PACKAGES = {
        "software.amazon.kinesis.producer.", "sparkkpl.shaded.software.amazon.kinesis.producer.",
    };

    private InstallMain() {}

    public static void main(String[] args) throws Exception {
        boolean ours = args[0].equals("ours");
        String dir = args[1];
        Files.createFile(Paths.get(args[2]));
        Path go = Paths.get(args[3]);
        while (!Files.exists(go)) {
            Thread.sleep(2);
        }
        Interrupter interrupter = new Interrupter(Thread.currentThread(), Long.parseLong(args[4]));
        Path executable;
        try {
            executable = ours ? NativeDaemon.install(dir.equals("-") ? NativeDaemon.defaultDir() : Paths.get(dir),
                    "spark.kpl.nativeDir") : extractWithStockKpl(dir);
        } catch (Throwable failure) {
            interrupter.stop();
            System.out.println("FAIL " + describe(failure));
            System.exit(1);
            return;
        }
        boolean interrupted = interrupter.stop();
        if (ours && interrupted && !Thread.interrupted()) {
            System.out.println("FAIL the interrupt flag was lost");
            System.exit(1);
        }
        System.out.println("OK " + executable + " " + HexFormat.of().formatHex(DaemonPlacement.sha256(executable))
                + " interrupted=" + interrupted);
    }

    private static Path extractWithStockKpl(String dir) throws Exception {
        Class<?> producerClass = kplClass("KinesisProducer");
        Class<?> configClass = kplClass("KinesisProducerConfiguration");
        Object config = configClass.getConstructor().newInstance();
        configClass.getMethod("setRegion", String.class).invoke(config, "us-east-1");
        configClass.getMethod("setKinesisEndpoint", String.class).invoke(config, "127.0.0.1");
        configClass.getMethod("setMetricsLevel", String.class).invoke(config, "none");
        if (!dir.equals("-")) {
            configClass.getMethod("setTempDirectory", String.class).invoke(config, dir);
        }
        Object producer = allocateWithoutConstructor(producerClass);
        accessibleField(producerClass, "config").set(producer, config);
        Method extract = producerClass.getDeclaredMethod("extractBinaries");
        extract.setAccessible(true);
        extract.invoke(producer);
        return Paths.get((String) accessibleField(producerClass, "pathToExecutable").get(producer));
    }

    private static Class<?> kplClass(String simpleName) throws ClassNotFoundException {
        for (String prefix : KPL_PACKAGES) {
            try {
                return Class.forName(prefix + simpleName);
            } catch (ClassNotFoundException tryNext) {
                // not this packaging
            }
        }
        throw new ClassNotFoundException(simpleName + " in none of the KPL packages");
    }

    private static Field accessibleField(Class<?> type, String name) throws NoSuchFieldException {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }

    /** Reflection keeps javac's unsuppressible sun.misc warning, fatal under -Werror, away. */
    private static Object allocateWithoutConstructor(Class<?> type) throws Exception {
        Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
        Field theUnsafe = accessibleField(unsafeClass, "theUnsafe");
        return unsafeClass.getMethod("allocateInstance", Class.class).invoke(theUnsafe.get(null), type);
    }

    private static String describe(Throwable failure) {
        StringBuilder reasons = new StringBuilder();
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (!(cause instanceof InvocationTargetException)) {
                reasons.append(reasons.length() == 0 ? "" : " <- ").append(cause);
            }
        }
        return reasons.toString().replace('\n', ' ');
    }

    /** Interrupts a thread after a delay unless stopped first; reports whether it did. */
    private static final class Interrupter {
        private boolean stopped;
        private boolean fired;

        Interrupter(Thread target, long delayMillis) {
            if (delayMillis < 0) {
                return;
            }
            Thread timer = new Thread(() -> {
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    return;
                }
                synchronized (this) {
                    if (!stopped) {
                        fired = true;
                        target.interrupt();
                    }
                }
            }, "contention-interrupter");
            timer.setDaemon(true);
            timer.start();
        }

        synchronized boolean stop() {
            stopped = true;
            return fired;
        }
    }
}
