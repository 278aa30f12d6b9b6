package sparkkpl.natives;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;
import static org.junit.Assume.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

public class NativeDaemonTest {

    private static final DaemonPlacement.Bundled BUNDLED = bundledForThisPlatform();

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void freshInstallIsPrivateVerifiedAndReusedWithoutRewrite() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("natives");

        Path executable = install(dir);

        assertEquals(dir.resolve(BUNDLED.folderName()).resolve("kinesis_producer"), executable);
        assertVerified(executable);
        assertEquals("rwx------", mode(dir));
        assertEquals("rwx------", mode(executable.getParent()));
        Object inode = fileKey(executable);
        FileTime modified = Files.getLastModifiedTime(executable);

        assertEquals(executable, install(dir));
        // As another process would: no per-JVM cache, only the file in place.
        assertEquals(executable, DaemonPlacement.place(dir, BUNDLED).executable());
        assertEquals(inode, fileKey(executable));
        assertEquals(modified, Files.getLastModifiedTime(executable));
    }

    @Test
    public void theLauncherBesideTheDaemonStartsItWithTheAllocatorTunedAndTheUsersTunablesLast() throws Exception {
        Path executable = install(tmp.getRoot().toPath().resolve("natives"));
        Path launcher = NativeDaemon.launcherOf(executable);
        assertEquals(executable.getParent(), launcher.getParent());
        assertEquals("rwx------", mode(launcher));
        // The same script beside a stand-in daemon that shows what it was started with.
        Path folder = tmp.newFolder("stand-in").toPath();
        Files.copy(launcher, folder.resolve(DaemonLauncher.NAME));
        Path standIn = folder.resolve("kinesis_producer");
        Files.writeString(standIn, "#!/bin/sh\necho \"$GLIBC_TUNABLES|$*\"\n");
        Files.setPosixFilePermissions(standIn, PrivateDirectory.OWNER_ONLY);

        assertEquals(DaemonLauncher.TUNABLES + "|-o out -i in",
            runFor(folder.resolve(DaemonLauncher.NAME), Map.of(), "-o", "out", "-i", "in"));
        assertEquals(DaemonLauncher.TUNABLES + ":glibc.malloc.arena_max=8|",
            runFor(folder.resolve(DaemonLauncher.NAME), Map.of("GLIBC_TUNABLES", "glibc.malloc.arena_max=8")));
    }

    @Test
    public void aLauncherRemovedOrChangedIsPlacedAgainAndTheDaemonLeftAsItIs() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Path executable = install(dir);
        Path launcher = NativeDaemon.launcherOf(executable);
        byte[] script = Files.readAllBytes(launcher);
        Object daemonInode = fileKey(executable);

        Files.delete(launcher);
        assertEquals(executable, install(dir));
        assertArrayEquals(script, Files.readAllBytes(launcher));

        Files.writeString(launcher, "#!/bin/sh\nexec \"${0%/*}/kinesis_producer\" \"$@\"\n");
        assertEquals(executable, install(dir));
        assertArrayEquals(script, Files.readAllBytes(launcher));
        assertEquals(daemonInode, fileKey(executable));
    }

    /** Placed and remembered by this JVM first: the corruption must get past its cache, not just the placement. */
    @Test
    public void corruptedDaemonInPlaceIsReplaced() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Path executable = install(dir);
        Object inode = fileKey(executable);
        try (RandomAccessFile file = new RandomAccessFile(executable.toFile(), "rw")) {
            long middle = file.length() / 2;
            file.seek(middle);
            int original = file.read();
            file.seek(middle);
            file.write(~original);
        }

        assertEquals(executable, install(dir));

        assertVerified(executable);
        assertNotEquals(inode, fileKey(executable));
    }

    @Test
    public void truncatedDaemonIsReplaced() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Path executable = install(dir);
        try (FileChannel file = FileChannel.open(executable, StandardOpenOption.WRITE)) {
            file.truncate(4096);
        }

        assertEquals(executable, install(dir));

        assertVerified(executable);
    }

    @Test
    public void foreignExecutableIsReplacedWithoutBeingRun() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Path executable = ownerOnlyFolder(dir).resolve("kinesis_producer");
        Path marker = tmp.getRoot().toPath().resolve("foreign-ran");
        Files.writeString(executable, "#!/bin/sh\ntouch " + marker + "\necho Usage:\n");
        Files.setPosixFilePermissions(executable, PrivateDirectory.OWNER_ONLY);

        assertEquals(executable, install(dir));

        assertVerified(executable);
        assertFalse(Files.exists(marker));
    }

    @Test
    public void symlinkInPlaceOfTheDaemonIsReplacedNotFollowed() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("natives");
        Path executable = ownerOnlyFolder(dir).resolve("kinesis_producer");
        Path victim = tmp.newFile("victim").toPath();
        Files.writeString(victim, "untouched");
        Files.createSymbolicLink(executable, victim);

        assertEquals(executable, install(dir));

        assertFalse(Files.isSymbolicLink(executable));
        assertVerified(executable);
        assertEquals("untouched", Files.readString(victim));
    }

    @Test
    public void symlinkWhereTheDirShouldBeIsRefused() throws Exception {
        Path real = tmp.newFolder("real").toPath();
        Files.setPosixFilePermissions(real, PrivateDirectory.OWNER_ONLY);
        Path dir = Files.createSymbolicLink(tmp.getRoot().toPath().resolve("natives"), real);

        assertRefused(dir, "is a symbolic link");
    }

    @Test
    public void dirOwnedByAnotherUserIsRefused() throws Exception {
        assumeTrue("needs root to give a folder away", PrivateDirectory.currentUid() == 0);
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PrivateDirectory.OWNER_ONLY);
        Files.setOwner(dir, dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));

        assertRefused(dir, "not by this user");
    }

    @Test
    public void aFolderOfAnotherUserGivesWayToThisUsersOwnThenToOneNamedByUidThenToNone() {
        Path defaultDir = Paths.get("/tmp/spark-kpl-yarn");
        Path byUid = Paths.get("/tmp/spark-kpl-yarn-" + PrivateDirectory.currentUid());

        assertEquals(defaultDir, NativeDaemon.ownFolderInstead(Paths.get("/mnt/hadoop-native"), defaultDir));
        assertEquals(byUid, NativeDaemon.ownFolderInstead(defaultDir, defaultDir));
        assertEquals(null, NativeDaemon.ownFolderInstead(byUid, defaultDir));
    }

    @Test
    public void aFolderOfThisUsersThatOthersCanWriteIsRefusedWithoutFallingBack() throws Exception {
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));

        UncheckedIOException refused = assertThrows(UncheckedIOException.class,
            () -> NativeDaemon.installHereOrInOwnFolder(dir, "spark.kpl.nativeDir"));
        assertTrue(refused.getMessage(), refused.getMessage().contains("can be written by other users"));
        assertTrue(refused.getMessage(), refused.getMessage().contains(dir.toString()));
    }

    @Test
    public void dirWritableByOthersIsRefused() throws Exception {
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));

        assertRefused(dir, "can be written by other users");
    }

    @Test
    public void dirOnlyReadableByOthersIsTightened() throws Exception {
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));

        assertVerified(install(dir));
        assertEquals("rwx------", mode(dir));
    }

    @Test
    public void readOnlyDirIsAnErrorNamingPathAndConfKey() throws Exception {
        Path dir = tmp.newFolder("natives").toPath();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-x------"));
        // Root ignores modes; the immutable attribute stops it too.
        boolean immutable = PrivateDirectory.currentUid() == 0 && run("chattr", "+i", dir.toString()) == 0;
        assumeTrue("cannot make a folder read-only here", PrivateDirectory.currentUid() != 0 || immutable);
        try {
            UncheckedIOException error = assertThrows(UncheckedIOException.class, () -> install(dir));
            assertNamesPathAndConfKey(error, dir);
        } finally {
            if (immutable) {
                run("chattr", "-i", dir.toString());
            }
            Files.setPosixFilePermissions(dir, PrivateDirectory.OWNER_ONLY);
        }
    }

    @Test
    public void noexecFileSystemIsAnErrorNamingPathAndConfKey() throws Exception {
        assertRefusedOnTmpfs("noexec,size=200m", "noexec", dir -> { });
    }

    @Test
    public void fullDiskIsAnErrorNamingPathAndConfKey() throws Exception {
        assertRefusedOnTmpfs("size=32m", "No space left on device", dir -> {
            try (var leftovers = Files.list(dir.resolve(BUNDLED.folderName()))) {
                assertEquals("no temp file left behind", 0, leftovers.count());
            }
        });
    }

    /** What a test checks in the refused folder before the file system goes. */
    private interface FolderCheck {
        void check(Path dir) throws IOException;
    }

    /** Placing the daemon on a fresh tmpfs mounted with {@code mountOptions} is refused, for {@code reason}. */
    private void assertRefusedOnTmpfs(String mountOptions, String reason, FolderCheck afterwards) throws Exception {
        Path mountPoint = tmp.newFolder("tmpfs").toPath();
        assumeTrue("cannot mount a tmpfs with " + mountOptions, mountTmpfs(mountPoint, mountOptions));
        try {
            Path dir = mountPoint.resolve("natives");
            assertRefused(dir, reason);
            afterwards.check(dir);
        } finally {
            run("umount", mountPoint.toString());
        }
    }

    @Test
    public void interruptDuringInstallStillReturnsVerifiedDaemonAndKeepsTheFlag() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("natives");
        AtomicReference<Path> installed = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Boolean> flagAfter = new AtomicReference<>();
        Thread task = new Thread(() -> {
            try {
                installed.set(install(dir));
            } catch (Throwable t) {
                failure.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
        });
        task.start();
        Thread.sleep(100);
        assertTrue("install finished before the interrupt", task.isAlive());
        task.interrupt();
        task.join();

        assertEquals(null, failure.get());
        assertVerified(installed.get());
        assertTrue(flagAfter.get());
    }

    @Test
    public void alreadyInterruptedCallerStillGetsDaemonAndKeepsTheFlag() throws Exception {
        Path dir = tmp.getRoot().toPath().resolve("natives");
        Thread.currentThread().interrupt();
        Path executable;
        try {
            executable = install(dir);
        } finally {
            assertTrue(Thread.interrupted());
        }
        assertVerified(executable);
    }

    @Test
    public void staleTempFilesOfKilledWritersAreRemoved() throws Exception {
        Path dir = tmp.getRoot().toPath();
        Path folder = ownerOnlyFolder(dir);
        Path stale = Files.createFile(folder.resolve("kinesis_producer.killed.tmp"));
        Instant killedAt = Instant.now().minus(DaemonPlacement.STALE_TEMP_AGE).minusSeconds(60);
        Files.setLastModifiedTime(stale, FileTime.from(killedAt));
        Path live = Files.createFile(folder.resolve("kinesis_producer.writing.tmp"));

        assertVerified(install(dir));

        assertFalse(Files.exists(stale));
        assertTrue(Files.exists(live));
    }

    @Test
    public void platformsAreNamedAsTheKplNamesThem() {
        assertEquals("linux-x86_64", NativeDaemon.platform("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeDaemon.platform("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeDaemon.platform("Linux", "aarch64"));
        assertEquals("linux-aarch64", NativeDaemon.platform("Linux", "arm64"));
        assertEquals("osx", NativeDaemon.platform("Mac OS X", "aarch64"));
        assertEquals("osx", NativeDaemon.platform("Mac OS X", "x86_64"));
        IllegalStateException windows = assertThrows(IllegalStateException.class,
                () -> NativeDaemon.platform("Windows 11", "amd64"));
        assertContains(windows.getMessage(), "linux-x86_64, linux-aarch64, osx");
        assertThrows(IllegalStateException.class, () -> NativeDaemon.platform("Linux", "ppc64le"));
    }

    @Test
    public void defaultDirIsPerUserUnderTheJavaTempDir() {
        Path tmpdir = Paths.get(System.getProperty("java.io.tmpdir"));
        assertEquals(tmpdir.resolve("spark-kpl-" + System.getProperty("user.name")), NativeDaemon.defaultDir());
    }

    @Test
    public void inAYarnContainerTheDefaultDirIsPerUserUnderTheNodesTempDirNotTheContainers() {
        String containerTmp = "/data/nm/usercache/hadoop/appcache/application_1_0001/container_1_0001_01_000002/tmp";
        Map<String, String> container = Map.of("CONTAINER_ID", "container_1_0001_01_000002");
        assertEquals(Paths.get("/tmp/spark-kpl-hadoop"), NativeDaemon.defaultDir(container, containerTmp, "hadoop"));
        Map<String, String> withTmpDir = Map.of("CONTAINER_ID", "container_1_0001_01_000002", "TMPDIR", "/mnt/tmp");
        assertEquals(Paths.get("/mnt/tmp/spark-kpl-hadoop"), NativeDaemon.defaultDir(withTmpDir, containerTmp, "hadoop"));
        assertEquals(Paths.get("/var/tmp/spark-kpl-a_b"), NativeDaemon.defaultDir(Map.of(), "/var/tmp", "a/b"));
    }

    private static DaemonPlacement.Bundled bundledForThisPlatform() {
        String platform = NativeDaemon.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
        try {
            return DaemonPlacement.Bundled.read(NativeDaemon.RESOURCE_ROOT + "/" + platform + "/kinesis_producer");
        } catch (IOException e) {
            throw new IllegalStateException("the KPL jar must be on the test classpath", e);
        }
    }

    private static void assertVerified(Path executable) throws IOException {
        assertTrue(Files.isRegularFile(executable, LinkOption.NOFOLLOW_LINKS));
        assertEquals("rwx------", mode(executable));
        assertArrayEquals(BUNDLED.sha256(), DaemonPlacement.sha256(executable));
    }

    private static Path install(Path dir) {
        return NativeDaemon.install(dir, "spark.kpl.nativeDir");
    }

    private static void assertRefused(Path dir, String reason) {
        UncheckedIOException error = assertThrows(UncheckedIOException.class, () -> install(dir));
        assertNamesPathAndConfKey(error, dir);
        assertContains(error.getMessage(), reason);
    }

    private static void assertNamesPathAndConfKey(UncheckedIOException error, Path dir) {
        assertContains(error.getMessage(), dir.toString());
        assertContains(error.getMessage(), "spark.kpl.nativeDir");
    }

    private static void assertContains(String actual, String expected) {
        assertTrue("expected \"" + expected + "\" in: " + actual, actual.contains(expected));
    }

    private static Path ownerOnlyFolder(Path dir) throws IOException {
        Path folder = Files.createDirectories(dir.resolve(BUNDLED.folderName()));
        Files.setPosixFilePermissions(dir, PrivateDirectory.OWNER_ONLY);
        Files.setPosixFilePermissions(folder, PrivateDirectory.OWNER_ONLY);
        return folder;
    }

    private static String mode(Path path) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS));
    }

    private static Object fileKey(Path path) throws IOException {
        return Files.readAttributes(path, "unix:ino", LinkOption.NOFOLLOW_LINKS).get("ino");
    }

    private static boolean mountTmpfs(Path mountPoint, String options) throws Exception {
        return PrivateDirectory.currentUid() == 0
                && run("mount", "-t", "tmpfs", "-o", options, "tmpfs", mountPoint.toString()) == 0;
    }

    /** What {@code script} prints, started with {@code env} added and without GLIBC_TUNABLES unless given. */
    private static String runFor(Path script, Map<String, String> env, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().remove("GLIBC_TUNABLES");
        builder.environment().putAll(env);
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(output, 0, process.waitFor());
        return output.strip();
    }

    private static int run(String... command) throws Exception {
        return new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
    }
}
