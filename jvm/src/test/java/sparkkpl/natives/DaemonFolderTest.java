package sparkkpl.natives;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The folder of a producer's pipes, wherever the user put it (TempDirectory, nativeDir). */
public class DaemonFolderTest {
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void aBaseOthersCanWriteIsRefusedNamingTheOptionThatChoseIt() throws Exception {
        Path base = tmp.newFolder("shared").toPath();
        Files.setPosixFilePermissions(base, PosixFilePermissions.fromString("rwxrwxrwx"));

        UncheckedIOException error = assertThrows(UncheckedIOException.class,
            () -> DaemonFolder.create(base, "spark.kpl.TempDirectory"));

        assertTrue(error.getMessage(), error.getMessage().contains(base + " can be written by other users"));
        assertTrue(error.getMessage(), error.getMessage().contains("Set spark.kpl.TempDirectory to a folder of your own"));
    }

    @Test
    public void aSymlinkedBaseIsRefused() throws Exception {
        Path target = tmp.newFolder("target").toPath();
        Path link = Files.createSymbolicLink(tmp.getRoot().toPath().resolve("link"), target);

        UncheckedIOException error = assertThrows(UncheckedIOException.class, () -> DaemonFolder.create(link, "x"));

        assertTrue(error.getMessage(), error.getMessage().contains("is a symbolic link"));
    }

    @Test
    public void aMissingBaseIsCreatedOwnerOnlyAndEachProducerGetsItsOwnFolder() throws Exception {
        Path base = tmp.getRoot().toPath().resolve("new");

        DaemonFolder folder = DaemonFolder.create(base, "x");

        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(base)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(folder.path())));
        assertEquals(base, folder.path().getParent());
    }

    @Test
    public void aGivenNativeExecutableInAFolderOthersCanWriteIsRefused() throws Exception {
        Path folder = tmp.newFolder("bin").toPath();
        Files.setPosixFilePermissions(folder, PosixFilePermissions.fromString("rwxrwxrwx"));

        UncheckedIOException error = assertThrows(UncheckedIOException.class,
            () -> NativeDaemon.checkGivenExecutable(folder.resolve("kinesis_producer"), "spark.kpl.NativeExecutable"));

        assertTrue(error.getMessage(), error.getMessage().contains("spark.kpl.NativeExecutable"));
    }
}
