package sparkkpl.natives;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URL;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Puts the KPL daemon at {@code <dir>/<first 16 hex digits of its SHA-256>/kinesis_producer}, with the
 * {@link DaemonLauncher} the KPL starts it by beside it, and proves it is the bundled one and runs on
 * this host.
 *
 * <p>A complete, genuine file is guaranteed by the order of the steps, not by the lock: a unique temp
 * file beside the target, fsync, its SHA-256 checked against the bundled daemon's, chmod 0700, atomic
 * rename, fsync of the folder. Readers see either no file, an old file (checked by hash before use) or
 * the whole new one. The lock file {@code <dir>/.lock} only stops processes writing 86 MB in parallel,
 * and a lock held for too long is given up on rather than waited for.
 */
final class DaemonPlacement {

    /** The JDK's logger, not slf4j: {@code PlaceDaemon} runs this with the jar alone on the classpath. */
    private static final System.Logger LOG = System.getLogger(DaemonPlacement.class.getName());
    static final String EXECUTABLE_NAME = "kinesis_producer";
    static final String LOCK_FILE_NAME = ".lock";
    static final String TEMP_SUFFIX = ".tmp";
    /** A killed writer leaves its temp file behind; a live one finishes within seconds. */
    static final Duration STALE_TEMP_AGE = Duration.ofHours(1);
    private static final Duration LOCK_PATIENCE = Duration.ofSeconds(60);
    private static final Duration LOCK_POLL = Duration.ofMillis(50);
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(30);
    /** Printed by the daemon when started without arguments (then it exits 1). */
    private static final String USAGE_BANNER = "Usage:";
    private static final int TEXT_FILE_BUSY_RETRIES = 5;

    private DaemonPlacement() {}

    /**
     * The daemon inside this jar: where on the classpath its bytes are, and the SHA-256 every placed
     * copy must have. Another KPL jar earlier on the classpath (EMR and Glue images, other connectors'
     * shaded jars) carries a daemon at the same resource name, often of another KPL line that cannot
     * talk to this jar's KPL; so the copy is chosen by the digest recorded when this jar was built
     * ({@value #DIGESTS}), never by classpath order.
     */
    record Bundled(String resource, URL source, byte[] sha256) {
        /** Written by the build (build.gradle, recordDaemonDigests): resource name = hex SHA-256. */
        static final String DIGESTS = "daemon-sha256.properties";

        static Bundled read(String resource) throws IOException {
            return read(resource, DaemonPlacement.class.getClassLoader());
        }

        /** @throws IOException naming every copy on the classpath when none has the recorded digest */
        static Bundled read(String resource, ClassLoader classLoader) throws IOException {
            byte[] recorded = recordedDigest(resource);
            List<String> others = new ArrayList<>();
            for (URL candidate : Collections.list(classLoader.getResources(resource))) {
                byte[] digest;
                try (InputStream in = candidate.openStream()) {
                    digest = DaemonPlacement.sha256(in);
                }
                if (Arrays.equals(digest, recorded)) {
                    return new Bundled(resource, candidate, digest);
                }
                others.add(candidate + " (SHA-256 " + HexFormat.of().formatHex(digest) + ")");
            }
            throw new IOException("No copy of the KPL daemon on the classpath is the one this jar was built with ("
                + resource + ", SHA-256 " + HexFormat.of().formatHex(recorded) + "); found " + others + ". The "
                + "spark-kpl jar is damaged or missing from the classpath: put it back, or rebuild it");
        }

        private static byte[] recordedDigest(String resource) throws IOException {
            Properties digests = new Properties();
            try (InputStream in = DaemonPlacement.class.getResourceAsStream(DIGESTS)) {
                if (in == null) {
                    throw new IOException("the spark-kpl jar has no " + DIGESTS + ": it was not built by build.gradle");
                }
                digests.load(in);
            }
            String hex = digests.getProperty(resource);
            if (hex == null) {
                throw new IOException("the spark-kpl jar bundles no KPL daemon " + resource);
            }
            return HexFormat.of().parseHex(hex);
        }

        /** One folder per daemon build, so two KPL versions on a host never overwrite each other. */
        String folderName() {
            return HexFormat.of().formatHex(sha256).substring(0, 16);
        }

        InputStream open() throws IOException {
            return source.openStream();
        }
    }

    /**
     * A verified daemon (and its launcher), remembered so that later producers need not hash 86 MB
     * again. The same inode with the same size and the same change time (which every write moves and
     * no one can set back) is still the file that was verified; anything else is checked and placed
     * again.
     */
    record Placed(List<FileState> files) {

        /** {@code executable} first: the file {@link #executable} names. */
        static Placed of(Path executable, Path... beside) throws IOException {
            List<FileState> files = new ArrayList<>();
            files.add(FileState.of(executable));
            for (Path file : beside) {
                files.add(FileState.of(file));
            }
            return new Placed(List.copyOf(files));
        }

        Path executable() {
            return files.get(0).file();
        }

        boolean stillInPlace() {
            try {
                for (FileState file : files) {
                    if (!file.equals(FileState.of(file.file()))) {
                        return false;
                    }
                }
                return true;
            } catch (IOException gone) {
                return false;
            }
        }
    }

    /** A file as it was when verified: its inode, size and change time. */
    record FileState(Path file, Object fileKey, long size, Object changed) {

        static FileState of(Path file) throws IOException {
            BasicFileAttributes now = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return new FileState(file, now.fileKey(), now.size(),
                Files.getAttribute(file, "unix:ctime", LinkOption.NOFOLLOW_LINKS));
        }
    }

    static Placed place(Path dir, Bundled daemon) throws IOException {
        PrivateDirectory.ensure(dir);
        Path folder = dir.resolve(daemon.folderName());
        PrivateDirectory.ensure(folder);
        Path executable = folder.resolve(EXECUTABLE_NAME);
        Path launcher = folder.resolve(DaemonLauncher.NAME);
        if (!isIntact(executable, daemon.sha256()) || !isIntact(launcher, DaemonLauncher.SHA256)) {
            try (FileChannel lockFile = FileChannel.open(dir.resolve(LOCK_FILE_NAME),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                 FileLock lock = lockWithinPatience(lockFile)) {
                if (!isIntact(executable, daemon.sha256())) {
                    writeVerified(daemon::open, daemon.sha256(), executable);
                }
                if (!isIntact(launcher, DaemonLauncher.SHA256)) {
                    writeVerified(DaemonLauncher::open, DaemonLauncher.SHA256, launcher);
                }
                removeStaleTemps(folder);
            }
        }
        checkRuns(executable, launcher);
        return Placed.of(executable, launcher);
    }

    /** A regular file of ours, mode 0700, with the SHA-256 it must have; anything else gets replaced. */
    static boolean isIntact(Path executable, byte[] sha256) throws IOException {
        PosixFileAttributes attributes;
        try {
            attributes = Files.readAttributes(executable, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException absent) {
            return false;
        }
        return attributes.isRegularFile()
                && attributes.permissions().equals(PrivateDirectory.OWNER_ONLY)
                && PrivateDirectory.ownerUid(executable) == PrivateDirectory.currentUid()
                && Arrays.equals(sha256(executable), sha256);
    }

    static byte[] sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
            return sha256(in);
        }
    }

    static byte[] sha256(InputStream in) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        byte[] buffer = new byte[1 << 16];
        for (int read; (read = in.read(buffer)) > 0; ) {
            digest.update(buffer, 0, read);
        }
        return digest.digest();
    }

    /** Null when the patience runs out: placing without the lock is still correct, only maybe duplicated. */
    private static FileLock lockWithinPatience(FileChannel lockFile) throws IOException {
        long deadline = System.nanoTime() + LOCK_PATIENCE.toNanos();
        while (true) {
            try {
                FileLock lock = lockFile.tryLock();
                if (lock != null) {
                    return lock;
                }
            } catch (OverlappingFileLockException heldInThisJvm) {
                // A copy of this class in another class loader is placing; wait as for another process.
            }
            if (System.nanoTime() - deadline > 0) {
                return null;
            }
            LockSupport.parkNanos(LOCK_POLL.toNanos());
        }
    }

    /** Where {@link #writeVerified} reads a file's bytes from. */
    interface Source {
        InputStream open() throws IOException;
    }

    private static void writeVerified(Source source, byte[] sha256, Path target) throws IOException {
        Path folder = target.getParent();
        Path temp = Files.createTempFile(folder, target.getFileName() + ".", TEMP_SUFFIX,
                PosixFilePermissions.asFileAttribute(PrivateDirectory.OWNER_ONLY));
        try {
            try (InputStream in = source.open();
                 FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                in.transferTo(Channels.newOutputStream(out));
                out.force(true);
            }
            if (!Arrays.equals(sha256(temp), sha256)) {
                throw new IOException(temp + " does not hold what was written to it");
            }
            PrivateDirectory.setPermissionsNoFollow(temp, PrivateDirectory.OWNER_ONLY);
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            try (FileChannel folderHandle = FileChannel.open(folder, StandardOpenOption.READ)) {
                folderHandle.force(true);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private static void removeStaleTemps(Path folder) throws IOException {
        Instant cutoff = Instant.now().minus(STALE_TEMP_AGE);
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(folder, "*" + TEMP_SUFFIX)) {
            for (Path temp : temps) {
                try {
                    if (Files.getLastModifiedTime(temp, LinkOption.NOFOLLOW_LINKS).toInstant().isBefore(cutoff)) {
                        Files.deleteIfExists(temp);
                    }
                } catch (NoSuchFileException removedMeanwhile) {
                    // Another process cleaned it up first.
                }
            }
        }
    }

    /**
     * Proves the daemon runs here by starting it without arguments through {@code start} (itself, or
     * its launcher): it prints its usage and exits. When it does not, what the host lacks is named from
     * the daemon's ELF headers (its loader, its libraries, the glibc version), rather than left to the
     * KPL, which fails the records with "The child process has been shutdown" and restarts the daemon
     * every second or so. A lack found in the headers of a daemon that runs all the same is logged,
     * never fatal.
     *
     * @throws DaemonCannotRun when the daemon does not run and its headers say why
     */
    static void checkRuns(Path executable, Path start) throws IOException {
        List<String> lacking = HostRequirements.lacking(executable);
        String failure = probe(start);
        if (failure == null) {
            if (!lacking.isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, "{0} runs although this host seemed to lack what it needs: {1}",
                    executable, lacking);
            }
            return;
        }
        if (!lacking.isEmpty()) {
            throw new DaemonCannotRun(executable + " cannot run on this host: " + String.join("; ", lacking)
                + " (started without arguments: " + failure + ")");
        }
        if (!start.equals(executable) && probe(executable) == null) {
            throw new DaemonCannotRun("the daemon " + executable + " runs, but its launcher " + start + " (a /bin/sh "
                + "script that sets its allocator) does not: " + failure + ". Give the daemon itself as "
                + "spark.kpl.NativeExecutable to start it without the launcher");
        }
        throw new IOException(start + " does not run on this host: " + failure);
    }

    /** Why the daemon, started without arguments, did not print its usage; null when it did. */
    private static String probe(Path executable) throws IOException {
        Process process;
        try {
            process = start(new ProcessBuilder(executable.toString()).redirectErrorStream(true));
        } catch (NotStarted e) {
            return e.getMessage();
        }
        process.getOutputStream().close();
        try {
            if (!process.waitFor(PROBE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IOException(executable + " did not exit within " + PROBE_TIMEOUT.toSeconds()
                        + " s when started without arguments");
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while test-starting " + executable);
        }
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return output.contains(USAGE_BANNER) ? null : "exit " + process.exitValue() + ", " + output.strip();
    }

    /** The daemon has a reason of its own not to run on this host, which the message names. */
    static final class DaemonCannotRun extends IOException {
        DaemonCannotRun(String message) {
            super(message);
        }
    }

    /** A launch the OS refused for a reason other than a noexec mount (ENOENT: its loader is missing). */
    private static final class NotStarted extends IOException {
        NotStarted(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private static Process start(ProcessBuilder builder) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                return builder.start();
            } catch (IOException e) {
                // ETXTBSY: a child another thread is forking may briefly hold the temp file's write handle.
                if (attempt < TEXT_FILE_BUSY_RETRIES && String.valueOf(e.getMessage()).contains("error=26,")) {
                    LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
                    continue;
                }
                if (String.valueOf(e.getMessage()).contains("error=13,")) {
                    throw new IOException(builder.command().get(0)
                            + " cannot be executed (is its file system mounted noexec?): " + e.getMessage(), e);
                }
                throw new NotStarted(e);
            }
        }
    }
}
