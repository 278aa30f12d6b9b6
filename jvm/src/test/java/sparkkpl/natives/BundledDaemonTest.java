package sparkkpl.natives;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/**
 * Another KPL jar first on the classpath carries a daemon at the same resource name: the sink must
 * still take its own, the one whose SHA-256 the build recorded.
 */
public class BundledDaemonTest {
    private static final String RESOURCE = NativeDaemon.RESOURCE_ROOT + "/"
        + NativeDaemon.platform(System.getProperty("os.name"), System.getProperty("os.arch")) + "/kinesis_producer";

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void theRecordedDaemonIsChosenWhateverComesFirstOnTheClasspath() throws IOException {
        URL foreign = foreignDaemon();

        DaemonPlacement.Bundled bundled = DaemonPlacement.Bundled.read(RESOURCE, firstOnTheClasspath(foreign, true));

        assertTrue("not the foreign copy: " + bundled.source(), !bundled.source().equals(foreign));
        try (InputStream in = bundled.open()) {
            assertArrayEquals(bundled.sha256(), DaemonPlacement.sha256(in));
        }
        assertEquals(DaemonPlacement.Bundled.read(RESOURCE).source(), bundled.source());
    }

    @Test
    public void withoutTheRecordedDaemonTheErrorNamesWhatItFound() throws IOException {
        URL foreign = foreignDaemon();

        IOException error = assertThrows(IOException.class,
            () -> DaemonPlacement.Bundled.read(RESOURCE, firstOnTheClasspath(foreign, false)));

        assertTrue(error.getMessage(), error.getMessage().contains("No copy of the KPL daemon on the classpath"));
        assertTrue(error.getMessage(), error.getMessage().contains(foreign.toString()));
    }

    private URL foreignDaemon() throws IOException {
        Path file = tmp.newFile("kinesis_producer").toPath();
        Files.writeString(file, "#!/bin/sh\necho another KPL's daemon\n");
        return file.toUri().toURL();
    }

    /** A class loader listing {@code foreign} first for every resource, then (or not) the real classpath's. */
    private ClassLoader firstOnTheClasspath(URL foreign, boolean thenTheRest) {
        return new ClassLoader(getClass().getClassLoader()) {
            @Override
            public Enumeration<URL> getResources(String name) throws IOException {
                List<URL> urls = new ArrayList<>(List.of(foreign));
                if (thenTheRest) {
                    urls.addAll(Collections.list(super.getResources(name)));
                }
                return Collections.enumeration(urls);
            }
        };
    }
}
