package sparkkpl.natives;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The script the KPL starts the daemon by, placed beside it: it runs the daemon with glibc's
 * allocator told to hand back what the daemon frees.
 *
 * <p>Left at glibc's defaults, the daemon kept about half its peak RSS in memory it had freed: each
 * thread's arena keeps its free chunks, and a PutRecords body of megabytes, once freed, raises the
 * threshold above which allocations get pages of their own, so later bodies land in the arenas too.
 * Its peak at 1,024 shards ran 171 to 204 MiB against 94 to 109 with these settings, and the rate
 * stayed within its runs' spread (bench/README.md, "The daemon's allocator"). One arena (the daemon's
 * work runs on few threads), memory above 64 KiB returned as soon as it is freed, and allocations of
 * 64 KiB or more (the daemon's request and response bodies) in pages of their own.
 *
 * <p>A {@code GLIBC_TUNABLES} already in the environment is appended, so the user's settings win:
 * glibc takes the last value given for each tunable. Without glibc (macOS) the variable means nothing.
 */
final class DaemonLauncher {
    static final String NAME = "launch-daemon";
    static final String TUNABLES = "glibc.malloc.arena_max=1"
        + ":glibc.malloc.trim_threshold=65536"
        + ":glibc.malloc.mmap_threshold=65536";
    /** The KPL starts it by its absolute path, so {@code $0} names the folder the daemon is in. */
    private static final byte[] SCRIPT = ("#!/bin/sh\n"
        + "# Placed by spark-kpl: starts the KPL daemon beside it with glibc's allocator set to hand back what\n"
        + "# it frees (docs/native-daemon.md). A GLIBC_TUNABLES of your own comes after these, so it wins.\n"
        + "GLIBC_TUNABLES=\"" + TUNABLES + "${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}\"\n"
        + "export GLIBC_TUNABLES\n"
        + "exec \"${0%/*}/" + DaemonPlacement.EXECUTABLE_NAME + "\" \"$@\"\n").getBytes(StandardCharsets.UTF_8);
    static final byte[] SHA256;

    static {
        try {
            SHA256 = DaemonPlacement.sha256(open());
        } catch (IOException e) {
            throw new IllegalStateException("reading bytes in memory cannot fail", e);
        }
    }

    private DaemonLauncher() {}

    static InputStream open() {
        return new ByteArrayInputStream(SCRIPT);
    }
}
