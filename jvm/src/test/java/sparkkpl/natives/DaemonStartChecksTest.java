package sparkkpl.natives;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.BeforeClass;
import org.junit.ClassRule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * The KPL's most reported start failures, each named with what to install: copies of the bundled
 * daemon rewritten (with {@code patchelf}, or one version string changed) so that their loader, a
 * library or a glibc version cannot be found on this host, given as {@code NativeExecutable}.
 */
public class DaemonStartChecksTest {

    private static final String SET_BY = "spark.kpl.NativeExecutable";

    @ClassRule
    public static final TemporaryFolder TMP = new TemporaryFolder();

    /** The bundled daemon for this platform, copied once for every test to rewrite. */
    private static Path daemon;

    @BeforeClass
    public static void copyTheBundledDaemon() throws IOException {
        String platform = NativeDaemon.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        Path folder = ownerOnly(TMP.newFolder("bundled").toPath());
        daemon = folder.resolve("kinesis_producer");
        try (InputStream in = DaemonPlacement.Bundled.read(
                NativeDaemon.RESOURCE_ROOT + "/" + platform + "/kinesis_producer").open()) {
            Files.copy(in, daemon);
        }
        Files.setPosixFilePermissions(daemon, PosixFilePermissions.fromString("rwx------"));
    }

    @Test
    public void theBundledDaemonRunsAndItsNeedsAreRead() throws IOException {
        NativeDaemon.checkGivenExecutable(daemon, SET_BY);

        ElfDependencies needs = ElfDependencies.read(daemon);
        assertTrue(needs.interpreter(), needs.interpreter().startsWith("/lib"));
        assertTrue(needs.needed().toString(), needs.needed().contains("libc.so.6"));
        assertTrue(needs.versionsNeeded().toString(),
            needs.versionsNeeded().getOrDefault("libc.so.6", List.of()).contains("GLIBC_2.3"));
    }

    @Test
    public void aLauncherThatCannotRunIsToldFromTheDaemonWithTheWayAround() throws Exception {
        Path folder = ownerOnly(TMP.newFolder("no-shell").toPath());
        Path launcher = folder.resolve(DaemonLauncher.NAME);
        Files.writeString(launcher, "#!/nonexistent/sh\nexec \"${0%/*}/kinesis_producer\" \"$@\"\n");
        Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwx------"));

        DaemonPlacement.DaemonCannotRun refusal = assertThrows(DaemonPlacement.DaemonCannotRun.class,
            () -> DaemonPlacement.checkRuns(daemon, launcher));

        assertContains(refusal.getMessage(), "the daemon " + daemon + " runs, but its launcher " + launcher);
        assertContains(refusal.getMessage(), "Give the daemon itself as spark.kpl.NativeExecutable");
    }

    @Test
    public void aMissingLoaderIsNamedWithWhatToInstall() throws Exception {
        Path copy = rewritten("loader", "--set-interpreter", "/lib64/ld-nonexistent.so.2");

        String message = refusal(copy);

        assertContains(message, "/lib64/ld-nonexistent.so.2");
        assertContains(message, "libc6 (Debian/Ubuntu) or glibc (RHEL/Amazon Linux)");
    }

    @Test
    public void aMissingLibraryIsNamedWithWhatToInstall() throws Exception {
        Path copy = rewritten("library", "--add-needed", "libdoesnotexist.so.1");

        String message = refusal(copy);

        assertContains(message, "libdoesnotexist.so.1 it needs is not found on this host");
    }

    @Test
    public void aGlibcTooOldIsNamedWithTheVersionNeeded() throws Exception {
        Path copy = withGlibcVersion("GLIBC_2.3.4", "GLIBC_9.9.9");

        String message = refusal(copy);

        assertContains(message, "it needs glibc 9.9.9 or newer (libpthread.so.0 lacks [GLIBC_9.9.9], libc.so.6 lacks "
            + "[GLIBC_9.9.9]), this host has glibc 2.");
        assertContains(message, "use an image whose glibc is 9.9.9 or newer");
    }

    @Test
    public void aMissingLibuuidNamesItsPackages() throws IOException {
        ElfDependencies needs = new ElfDependencies(ElfDependencies.EM_X86_64, "/lib64/ld-linux-x86-64.so.2",
            List.of("libuuid.so.1"), Map.of(), List.of());

        String lacking = onlyLack(hostWith("lib64/ld-linux-x86-64.so.2"), needs);

        assertContains(lacking, "libuuid.so.1");
        assertContains(lacking, "install libuuid1 (Debian/Ubuntu) or libuuid (RHEL/Amazon Linux)");
    }

    @Test
    public void aMuslHostIsNamedAsSuch() throws IOException {
        String lacking = onlyLack(hostWith("lib/ld-musl-x86_64.so.1"), ElfDependencies.read(daemon));

        assertContains(lacking, "musl");
        assertContains(lacking, "Alpine is not supported; use a glibc-based image");
    }

    @Test
    public void whatCannotBeCheckedIsNotARefusal() throws IOException {
        Path notElf = TMP.newFile("not-elf").toPath();
        Files.writeString(notElf, "#!/bin/sh\n");

        assertEquals(List.of(), HostRequirements.lacking(notElf));
    }

    @Test
    public void theHighestGlibcVersionIsComparedByNumber() {
        assertEquals(Optional.of("2.25"),
            HostRequirements.highestGlibc(List.of("GLIBC_2.3.4", "GLIBC_2.25", "GLIBC_2.9", "GCC_4.2.0")));
        assertEquals(Optional.empty(), HostRequirements.highestGlibc(List.of("GCC_3.0")));
    }

    @Test
    public void ldconfigEntriesAreReadWithTheirPaths() {
        String output = "2 libs found in cache `/etc/ld.so.cache'\n"
            + "\tlibuuid.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libuuid.so.1\n"
            + "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6\n";

        Map<String, List<Path>> cache = HostRequirements.parseLdconfig(output);

        assertEquals(List.of(Paths.get("/lib/x86_64-linux-gnu/libuuid.so.1")), cache.get("libuuid.so.1"));
        assertEquals(List.of(Paths.get("/lib/x86_64-linux-gnu/libc.so.6")), cache.get("libc.so.6"));
    }

    /** A host root holding only {@code file} (empty), with no ldconfig cache and no LD_LIBRARY_PATH. */
    private static HostRequirements hostWith(String file) throws IOException {
        Path root = TMP.newFolder().toPath();
        Files.createDirectories(root.resolve(file).getParent());
        Files.createFile(root.resolve(file));
        return new HostRequirements(root, List.of(), Map.of());
    }

    private static String onlyLack(HostRequirements host, ElfDependencies needs) {
        List<String> lacking = host.lacking(needs);
        assertEquals(lacking.toString(), 1, lacking.size());
        return lacking.get(0);
    }

    /** The daemon as a user who gives it as NativeExecutable would see it refused. */
    private static String refusal(Path copy) {
        UncheckedIOException error = assertThrows(UncheckedIOException.class,
            () -> NativeDaemon.checkGivenExecutable(copy, SET_BY));
        assertContains(error.getMessage(), SET_BY);
        assertContains(error.getMessage(), copy.toString());
        return error.getMessage();
    }

    private static Path rewritten(String name, String... patchelfArguments) throws Exception {
        assumeTrue("patchelf is not installed (scripts/install.sh installs it)", patchelfInstalled());
        Path copy = copyInItsOwnFolder(name);
        List<String> command = new ArrayList<>(List.of("patchelf"));
        command.addAll(List.of(patchelfArguments));
        command.add(copy.toString());
        Process patchelf = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(patchelf.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(output, 0, patchelf.waitFor());
        return copy;
    }

    /**
     * A copy whose need for {@code from} in its dynamic string table reads {@code to} (same length):
     * what a daemon built against a newer glibc than the host's looks like to the loader.
     */
    private static Path withGlibcVersion(String from, String to) throws IOException {
        byte[] bytes = Files.readAllBytes(daemon);
        byte[] needle = (from + "\0").getBytes(StandardCharsets.US_ASCII);
        int at = indexOf(bytes, needle);
        assertTrue(from + " not found in the daemon", at >= 0);
        System.arraycopy(to.getBytes(StandardCharsets.US_ASCII), 0, bytes, at, to.length());
        Path copy = copyInItsOwnFolder("glibc");
        Files.write(copy, bytes);
        return copy;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static Path copyInItsOwnFolder(String name) throws IOException {
        Path copy = ownerOnly(TMP.newFolder(name).toPath()).resolve("kinesis_producer");
        Files.copy(daemon, copy);
        Files.setPosixFilePermissions(copy, PosixFilePermissions.fromString("rwx------"));
        return copy;
    }

    private static Path ownerOnly(Path folder) throws IOException {
        Files.setPosixFilePermissions(folder, PrivateDirectory.OWNER_ONLY);
        return folder;
    }

    private static boolean patchelfInstalled() {
        try {
            return new ProcessBuilder("patchelf", "--version").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private static void assertContains(String actual, String expected) {
        assertTrue("expected \"" + expected + "\" in: " + actual, actual.contains(expected));
    }
}
