package sparkkpl.natives;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

import sparkkpl.util.OffTaskThread;

/**
 * The KPL's native daemon, placed by us so the KPL never extracts it.
 *
 * <p>The KPL's own extraction writes into one folder shared by every user of the host, under a
 * {@code FileLock} that a thread interrupt breaks (Spark interrupts task threads on cancel). Pass the
 * path {@link #install} returns to the KPL as {@code NativeExecutable}. The KPL then writes its CA
 * certificates into {@code cacerts/} beside the binary (with a {@code cacerts.lock}), which is why the
 * binary's folder stays writable by its owner. It still makes its named pipes under
 * {@code <TempDirectory>/amazon-kinesis-producer-native-binaries}, so pass the same {@code dir} as
 * {@code TempDirectory} to keep those out of the folder shared by every user too.
 */
public final class NativeDaemon {

    static final String RESOURCE_ROOT = "amazon-kinesis-producer-native-binaries";
    /** The platforms the KPL jar (1.0.9 and 1.1.1 alike) carries a daemon for, named as the KPL names them. */
    static final List<String> PLATFORMS = List.of("linux-x86_64", "linux-aarch64", "osx");
    /** The JDK's logger, not slf4j: {@code PlaceDaemon} runs this with the jar alone on the classpath. */
    private static final System.Logger LOG = System.getLogger(NativeDaemon.class.getName());
    /** Folders of another user this JVM has said it does not use, so that it says so once. */
    private static final Set<Path> PASSED_OVER = ConcurrentHashMap.newKeySet();
    /** Set by the NodeManager in every YARN container's environment. */
    static final String YARN_CONTAINER_ENV = "CONTAINER_ID";

    /**
     * All placing runs here, never on the caller's thread: an interrupt of a task thread would close a
     * {@code FileChannel} mid-lock or mid-write. One thread also keeps this JVM's own lock attempts
     * from overlapping.
     */
    private static final ExecutorService PLACER = OffTaskThread.newWorker("spark-kpl-native-daemon");
    private static final Map<Path, DaemonPlacement.Placed> PLACED = new ConcurrentHashMap<>();
    /** Daemons given as NativeExecutable that ran here, as they were then (same inode, size, change time). */
    private static final Set<DaemonPlacement.Placed> GIVEN_AND_RUNS = ConcurrentHashMap.newKeySet();
    /** Hashed once per JVM; touched by the PLACER thread only. */
    private static DaemonPlacement.Bundled bundled;

    private NativeDaemon() {}

    /**
     * {@code <java.io.tmpdir>/spark-kpl-<user.name>}: one folder per user, never shared between users.
     * In a YARN container, whose {@code java.io.tmpdir} is the container's own folder (deleted when it
     * ends), {@code <$TMPDIR, else /tmp>/spark-kpl-<user.name>} instead: the node's temp folder, so
     * that a user's containers on one node place one copy (86 MB), and no container's clean-up removes
     * the daemon another container runs.
     */
    public static Path defaultDir() {
        return defaultDir(System.getenv(), System.getProperty("java.io.tmpdir"), System.getProperty("user.name"));
    }

    static Path defaultDir(Map<String, String> env, String javaTmpDir, String userName) {
        String user = userName.replaceAll("[^A-Za-z0-9._-]", "_");
        String base = javaTmpDir;
        if (env.containsKey(YARN_CONTAINER_ENV)) {
            String nodeTmp = env.get("TMPDIR");
            base = nodeTmp == null || nodeTmp.isBlank() ? "/tmp" : nodeTmp;
        }
        return Paths.get(base, "spark-kpl-" + user);
    }

    /**
     * Returns a verified daemon executable for this platform under {@code dir}, placing it if needed.
     * Safe to call from many threads and processes at once; an interrupt of the calling thread does
     * not abort it and stays set on return.
     *
     * @param dirSetBy the setting that chose {@code dir}, which a refusal tells the user to change
     * @throws UncheckedIOException naming the folder and {@code dirSetBy} when {@code dir} is refused,
     *     unwritable, full or mounted noexec
     * @throws IllegalStateException on a platform the KPL has no daemon for
     */
    public static Path install(Path dir, String dirSetBy) {
        Path key = Objects.requireNonNull(dir, "dir").toAbsolutePath().normalize();
        DaemonPlacement.Placed known = knownPlacement(key);
        if (known != null) {
            return known.executable();
        }
        return OffTaskThread.call(PLACER, () -> placeOnce(key, dirSetBy)).executable();
    }

    /** Where {@link #installHereOrInOwnFolder} placed the daemon: the folder it ran from, and the executable. */
    public record Placement(Path dir, Path executable) {}

    /**
     * As {@link #install}, except that a folder owned by another user (one who placed the daemon for
     * themselves, such as a bootstrap action run as another user than the executors) is passed over, said
     * once, for this user's own folder: {@link #defaultDir()}, or if that too is another user's,
     * {@code <defaultDir>-<uid>}, which no one else has reason to make. Every other refusal stands (a folder of
     * this user's that others can write, a symbolic link, a file), as does the own folder's, checked the same way.
     */
    public static Placement installHereOrInOwnFolder(Path dir, String dirSetBy) {
        try {
            return new Placement(dir, install(dir, dirSetBy));
        } catch (UncheckedIOException refused) {
            Path own = ownFolderInstead(dir.toAbsolutePath().normalize(), defaultDir().toAbsolutePath().normalize());
            if (!(refused.getCause() instanceof PrivateDirectory.OwnedByAnotherUser) || own == null) {
                throw refused;
            }
            if (PASSED_OVER.add(dir)) {
                LOG.log(System.Logger.Level.WARNING, "Not running the KPL daemon from {0} ({1}): {2}, who could "
                    + "replace it there. Placing this user''s own copy in {3} instead.", dir, dirSetBy,
                    refused.getCause().getMessage(), own);
            }
            try {
                return installHereOrInOwnFolder(own, dirSetBy);
            } catch (UncheckedIOException alsoRefused) {
                alsoRefused.addSuppressed(refused);
                throw alsoRefused;
            }
        }
    }

    /** This user's own folder instead of {@code refused}, or null when {@code refused} was the last of them. */
    static Path ownFolderInstead(Path refused, Path defaultDir) {
        Path byUid = Paths.get(defaultDir + "-" + PrivateDirectory.currentUid());
        if (refused.equals(byUid)) {
            return null;
        }
        return refused.equals(defaultDir) ? byUid : defaultDir;
    }

    /**
     * What the KPL is to start ({@code NativeExecutable}) for a daemon {@link #install} placed: the
     * {@link DaemonLauncher} beside it, placed and verified with it.
     */
    public static Path launcherOf(Path placedExecutable) {
        return placedExecutable.resolveSibling(DaemonLauncher.NAME);
    }

    /**
     * Checks a daemon the user gave as {@code NativeExecutable}: its folder, which whoever can write
     * can swap the binary in and where the KPL writes its CA certificates (the user's folder, so it
     * is checked, never changed); and, once per JVM for each file, that it runs on this host.
     *
     * @param executableSetBy the setting that gave {@code executable}
     * @throws UncheckedIOException naming the folder or what the host lacks, and {@code executableSetBy}
     */
    public static void checkGivenExecutable(Path executable, String executableSetBy) {
        Path folder = executable.toAbsolutePath().getParent();
        try {
            PrivateDirectory.checkOnlyOwnerCanWrite(folder);
        } catch (IOException e) {
            throw new UncheckedIOException("Refusing to run the KPL daemon given as " + executableSetBy + " ("
                + executable + "): its folder " + reason(e) + "; whoever can write there can replace the binary. "
                + "Use a folder of your own that no other user can write.", e);
        }
        if (!GIVEN_AND_RUNS.contains(givenAsItIs(executable, executableSetBy))) {
            // Off the task's thread, as placing: an interrupt must not pass for the daemon failing.
            OffTaskThread.call(PLACER, () -> {
                DaemonPlacement.Placed given = givenAsItIs(executable, executableSetBy);
                try {
                    DaemonPlacement.checkRuns(executable, executable);
                } catch (IOException e) {
                    throw cannotStart(executableSetBy, e);
                }
                return GIVEN_AND_RUNS.add(given);
            });
        }
    }

    private static DaemonPlacement.Placed givenAsItIs(Path executable, String executableSetBy) {
        try {
            return DaemonPlacement.Placed.of(executable);
        } catch (IOException e) {
            throw cannotStart(executableSetBy, e);
        }
    }

    private static UncheckedIOException cannotStart(String executableSetBy, IOException e) {
        return new UncheckedIOException("The KPL daemon given as " + executableSetBy + " cannot start: " + reason(e), e);
    }

    /**
     * The KPL's name for a platform ({@code os.name}, {@code os.arch}), as in its extractBinaries; the
     * other names a JVM gives the same architectures ({@code x86_64}, {@code arm64}) choose it too.
     */
    static String platform(String osName, String osArch) {
        String name;
        if (osName.startsWith("Linux")) {
            name = "linux-" + switch (osArch) {
                case "amd64", "x86_64" -> "x86_64";
                case "aarch64", "arm64" -> "aarch64";
                default -> osArch;
            };
        } else if (osName.startsWith("Mac OS X")) {
            name = "osx";
        } else {
            name = osName + "/" + osArch;
        }
        if (!PLATFORMS.contains(name)) {
            throw new IllegalStateException("The KPL has no native daemon for " + osName + " on " + osArch
                    + "; it ships one for " + String.join(", ", PLATFORMS));
        }
        return name;
    }

    private static DaemonPlacement.Placed knownPlacement(Path dir) {
        DaemonPlacement.Placed known = PLACED.get(dir);
        return known != null && known.stillInPlace() ? known : null;
    }

    private static DaemonPlacement.Placed placeOnce(Path dir, String dirSetBy) {
        DaemonPlacement.Placed known = knownPlacement(dir);
        if (known != null) {
            return known; // a call queued before ours placed it
        }
        try {
            DaemonPlacement.Placed placed = DaemonPlacement.place(dir, bundled());
            PLACED.put(dir, placed);
            return placed;
        } catch (DaemonPlacement.DaemonCannotRun e) {
            throw new UncheckedIOException("The KPL native daemon cannot start: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot install the KPL native daemon in " + dir + ": "
                    + reason(e) + ". Set " + dirSetBy + " to a folder of your own"
                    + " on a local file system with free space that allows executables.", e);
        }
    }

    /** A file system error whose OS reason is missing names only the path; its type says what went wrong. */
    private static String reason(IOException e) {
        return e instanceof FileSystemException failed && failed.getReason() == null
                ? e.getClass().getSimpleName() + " on " + failed.getFile()
                : e.getMessage();
    }

    private static DaemonPlacement.Bundled bundled() throws IOException {
        if (bundled == null) {
            String platform = platform(System.getProperty("os.name"), System.getProperty("os.arch"));
            bundled = DaemonPlacement.Bundled.read(
                    RESOURCE_ROOT + "/" + platform + "/" + DaemonPlacement.EXECUTABLE_NAME);
        }
        return bundled;
    }
}
