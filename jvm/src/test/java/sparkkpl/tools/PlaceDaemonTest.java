package sparkkpl.tools;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.natives.NativeDaemon;

public class PlaceDaemonTest {

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @Test
    public void printsOnlyThePlacedPath() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("natives");

        assertEquals(PlaceDaemon.PLACED, run(dir.toString()));

        assertEquals(NativeDaemon.install(dir, "spark.kpl.nativeDir") + System.lineSeparator(), text(out));
        assertEquals("", text(err));
    }

    @Test
    public void aRefusalNamesTheFolderAndTheConfKey() throws Exception {
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertEquals(PlaceDaemon.REFUSED, run(dir.toString()));

        assertEquals("", text(out));
        assertTrue(text(err), text(err).startsWith("spark-kpl: Cannot install the KPL native daemon in " + dir));
        assertTrue(text(err), text(err).contains("can be written by other users"));
        assertTrue(text(err), text(err).contains("spark.kpl.nativeDir"));
    }

    @Test
    public void moreThanOneFolderOrABlankOneIsAUsageError() {
        assertEquals(PlaceDaemon.WRONG_ARGUMENTS, run("a", "b"));
        assertEquals(PlaceDaemon.WRONG_ARGUMENTS, run(" "));

        assertEquals("", text(out));
        assertEquals((PlaceDaemon.USAGE + System.lineSeparator()).repeat(2), text(err));
    }

    private int run(String... args) {
        return PlaceDaemon.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private static String text(ByteArrayOutputStream stream) {
        return stream.toString(StandardCharsets.UTF_8);
    }
}
