package sparkkpl.spark;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.Test;

/**
 * A write's options are parsed once, on the driver, by {@code config.WriteConfig} into values
 * ({@code WriteOptions}, {@code ProducerSpec}); what runs in a task receives those values and can
 * parse nothing, since it never reaches the parser or the option table.
 */
public class ExecutorsParseNothingTest {
    /** Whole packages whose classes run in tasks or below them. */
    private static final Set<String> EXECUTOR_PACKAGES = Set.of(
        "aggregation", "aws", "failures", "metrics", "natives", "producer", "records", "streaming", "util");
    /** The classes of the spark package that are shipped to or run on executors. */
    private static final Set<String> EXECUTOR_SPARK_CLASSES = Set.of(
        "KplDataWriter", "WritePlan", "KplWriterFactory", "SinkTaskFailedException");
    private static final List<String> PARSER = List.of("sparkkpl/config/WriteConfig", "sparkkpl/config/GivenOptions",
        "sparkkpl/config/OptionRules", "sparkkpl/config/KplDerivation", "sparkkpl/config/AutoStreams",
        "sparkkpl/config/ShownSettings", "sparkkpl/config/SinkOption");

    @Test
    public void noExecutorSideClassReachesTheParserOrTheOptionTable() throws IOException {
        Path root = Paths.get(WritePlan.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        List<Path> executorClasses;
        try (Stream<Path> files = Files.walk(root.resolve("sparkkpl"))) {
            executorClasses = files.filter(file -> file.toString().endsWith(".class"))
                .filter(file -> isExecutorSide(root.relativize(file))).toList();
        }
        assertTrue("executor classes found under " + root, executorClasses.size() > 50);
        List<String> reaching = executorClasses.stream().filter(ExecutorsParseNothingTest::reachesTheParser)
            .map(file -> root.relativize(file).toString()).toList();
        assertEquals(List.of(), reaching);
    }

    private static boolean isExecutorSide(Path relative) {
        String pkg = relative.getName(1).toString();
        String outer = relative.getFileName().toString().replaceAll("[$.].*", "");
        return EXECUTOR_PACKAGES.contains(pkg) || pkg.equals("spark") && EXECUTOR_SPARK_CLASSES.contains(outer);
    }

    /** The class file names one of them in its constant pool: it loads or calls it. */
    private static boolean reachesTheParser(Path classFile) {
        try {
            String constants = new String(Files.readAllBytes(classFile), StandardCharsets.ISO_8859_1);
            return PARSER.stream().anyMatch(constants::contains);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
