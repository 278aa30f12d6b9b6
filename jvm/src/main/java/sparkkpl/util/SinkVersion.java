package sparkkpl.util;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** The sink's own version, which the build records in the jar (build.gradle, recordDaemonDigests). */
public final class SinkVersion {
    private SinkVersion() {}

    /** The version, or "unknown" for classes run outside the built jar. */
    public static String of() {
        try (InputStream in = SinkVersion.class.getResourceAsStream("/sparkkpl/sink-version.txt")) {
            return in == null ? "unknown" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
