package sparkkpl.natives;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The folder, private to one producer, where its KPL makes the daemon's named pipes (the KPL's
 * {@code TempDirectory}). The pipes' paths are on the daemon's command line, so the folder also
 * tells which child processes of this JVM are that producer's daemons.
 *
 * <p>That is what {@link #destroy} needs. The KPL's own {@code destroy()} (KPL 1.0.9 and 1.1.1,
 * {@code Daemon.fatalError}) kills only a process it already holds: a daemon whose launch is still
 * under way when a producer closes (closed soon after it started, or while the KPL restarts a dead
 * daemon) is not its concern. Finding this producer's daemons by their command line makes "closed"
 * mean "no daemon left", whatever the KPL's threads were doing.
 */
public final class DaemonFolder {
    private static final Logger LOG = LoggerFactory.getLogger(DaemonFolder.class);
    private static final String PREFIX = "producer-";
    private static final long THIS_JVM = ProcessHandle.current().pid();
    private static final AtomicLong SERIAL = new AtomicLong();
    /** How long a daemon that was running gets to exit after the KPL's destroy, before SIGKILL. */
    private static final long EXIT_GRACE_MS = 2_000;
    /** How long to watch for a daemon whose launch was under way at destroy (it shows up within ~1 s). */
    private static final long LATE_START_WATCH_MS = 2_000;
    private static final long POLL_MS = 50;

    private final Path path;

    private DaemonFolder(Path path) {
        this.path = path;
    }

    /**
     * A new folder {@code producer-<jvm pid>-<n>} under {@code base}, owner-only. Records and
     * credentials flow through the pipes, so {@code base} gets the same owner and permission checks
     * as the daemon's own folder, wherever the user put it. Folders left by JVMs that no longer run
     * (killed before they could clean up) are removed first.
     *
     * @param setBy the option that chose {@code base}, named in the error when it is refused
     */
    public static DaemonFolder create(Path base, String setBy) {
        try {
            PrivateDirectory.ensure(base);
            removeLeftByDeadJvms(base);
            Path path = base.resolve(PREFIX + THIS_JVM + "-" + SERIAL.incrementAndGet());
            Files.createDirectory(path, PrivateDirectory.OWNER_ONLY_ATTRIBUTE);
            return new DaemonFolder(path);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot make a private folder for the KPL daemon's pipes (its records "
                + "and credentials pass through them) in " + base + ": " + e.getMessage() + ". Set " + setBy
                + " to a folder of your own that no other user can write.", e);
        }
    }

    public Path path() {
        return path;
    }

    /**
     * Runs the KPL's {@code destroy}, then stops by pid any daemon of this folder still running
     * (SIGTERM, SIGKILL after a grace period), and deletes the folder.
     */
    public void destroy(Runnable kplDestroy) {
        boolean wasRunning = !daemons().isEmpty();
        kplDestroy.run();
        long watchMs = wasRunning ? EXIT_GRACE_MS : LATE_START_WATCH_MS;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(watchMs);
        List<ProcessHandle> left = daemons();
        while (System.nanoTime() < deadline && !(wasRunning && left.isEmpty())) {
            left.forEach(ProcessHandle::destroy);
            if (!pause()) {
                break; // the JVM is going down: kill what is left now
            }
            left = daemons();
        }
        if (!left.isEmpty()) {
            LOG.warn("Killing {} KPL daemon(s) the KPL's destroy left running: pids {}", left.size(),
                left.stream().map(ProcessHandle::pid).toList());
            left.forEach(ProcessHandle::destroyForcibly);
        }
        deleteTree(path);
    }

    /** Children of this JVM whose command line names a file in this folder. */
    public List<ProcessHandle> daemons() {
        String inside = path + File.separator;
        return ProcessHandle.current().children()
            .filter(child -> child.info().arguments()
                .map(args -> Arrays.stream(args).anyMatch(arg -> arg.startsWith(inside)))
                .orElse(false))
            .toList();
    }

    private static void removeLeftByDeadJvms(Path base) throws IOException {
        try (Stream<Path> entries = Files.list(base)) {
            entries.filter(DaemonFolder::leftByDeadJvm).forEach(DaemonFolder::deleteTree);
        }
    }

    private static boolean leftByDeadJvm(Path entry) {
        String name = entry.getFileName().toString();
        if (!name.startsWith(PREFIX) || !Files.isDirectory(entry)) {
            return false;
        }
        String[] parts = name.substring(PREFIX.length()).split("-");
        try {
            return parts.length == 2 && ProcessHandle.of(Long.parseLong(parts[0])).isEmpty();
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /**
     * Deletes the folder and what is in it. The KPL's own threads may still be deleting its pipes at
     * the same moment, so entries that vanish mid-walk are skipped and the walk is retried. What
     * still cannot be deleted is removed by the next JVM's sweep.
     */
    private static void deleteTree(Path root) {
        for (int attempt = 0; attempt < 3 && Files.exists(root, LinkOption.NOFOLLOW_LINKS); attempt++) {
            try {
                Files.walkFileTree(root, new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                        Files.deleteIfExists(file);
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException error) {
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult postVisitDirectory(Path dir, IOException error) throws IOException {
                        Files.deleteIfExists(dir);
                        return FileVisitResult.CONTINUE;
                    }
                });
            } catch (IOException e) {
                LOG.debug("Could not delete {} yet", root, e);
                pause();
            }
        }
    }

    /** Sleeps one poll interval; false (the interrupt kept) when interrupted. */
    private static boolean pause() {
        try {
            Thread.sleep(POLL_MS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
