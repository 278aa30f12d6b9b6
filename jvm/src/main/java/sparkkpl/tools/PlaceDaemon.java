package sparkkpl.tools;

import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import sparkkpl.config.ProducerSpec;
import sparkkpl.natives.NativeDaemon;

/**
 * {@code java -cp spark-kpl.jar sparkkpl.tools.PlaceDaemon [<dir>]}: places the daemon with the code
 * executors run and prints its path, so a bootstrap action (EMR and Glue nodes have a JVM) places it
 * exactly as they would look for it. Without {@code <dir>}, in {@link NativeDaemon#defaultDir()}.
 *
 * <p>Exit status {@value #PLACED} with the path on stdout; {@value #REFUSED} with the reason on stderr,
 * naming the folder and the config key that moves it (the executors' {@code <dir>}), or what the node
 * lacks to run the daemon (its glibc loader, a library, the glibc version); {@value #WRONG_ARGUMENTS}
 * with the usage.
 */
public final class PlaceDaemon {

    static final int PLACED = 0;
    static final int REFUSED = 1;
    static final int WRONG_ARGUMENTS = 2;
    /** Before a refusal on stderr; spark_kpl.native strips it from the error it raises. */
    public static final String REFUSAL_PREFIX = "spark-kpl: ";
    static final String USAGE = "usage: java -cp spark-kpl.jar " + PlaceDaemon.class.getName() + " [<dir>]";

    private PlaceDaemon() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length > 1 || (args.length == 1 && args[0].isBlank())) {
            err.println(USAGE);
            return WRONG_ARGUMENTS;
        }
        Path dir = args.length == 1 ? Paths.get(args[0]) : NativeDaemon.defaultDir();
        try {
            out.println(NativeDaemon.install(dir, ProducerSpec.NATIVE_DIR_KEY));
            return PLACED;
        } catch (UncheckedIOException | IllegalStateException refused) {
            err.println(REFUSAL_PREFIX + refused.getMessage());
            return REFUSED;
        }
    }
}
