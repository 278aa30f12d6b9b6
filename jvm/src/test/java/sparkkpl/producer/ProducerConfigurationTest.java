package sparkkpl.producer;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.file.Path;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.config.TestConfigs;

/** A producer's KPL configuration completed: its daemon, its pipes' folder, its credentials. */
public class ProducerConfigurationTest {
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void theSinkPlacesTheDaemonAndKeepsThePipesInNativeDir() throws Exception {
        String nativeDir = tmp.newFolder("native").toString();

        ProducerConfiguration completed = ProducerConfiguration.complete(TestConfigs.producer("nativeDir", nativeDir,
            "awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t"));

        assertEquals(Path.of(nativeDir), completed.placedDaemonDir().orElseThrow());
        assertTrue(completed.kpl().getNativeExecutable().startsWith(nativeDir));
        assertEquals(Path.of(nativeDir), completed.pipesRoot());
        assertEquals("spark.kpl.nativeDir", completed.pipesSetBy());
        assertTrue(completed.kpl().getCredentialsProvider() != null);
        assertEquals(nativeDir, completed.settings().get("spark.kpl.TempDirectory"));
        assertEquals("***", completed.settings().get("spark.kpl.awsSecretAccessKey"));
    }

    @Test
    public void aGivenTempDirectoryHoldsThePipesAndTheProducerMovesThemIntoItsOwnFolder() throws Exception {
        String pipes = tmp.newFolder("pipes").toString();
        ProducerConfiguration completed = ProducerConfiguration.complete(TestConfigs.producer(
            "nativeDir", tmp.newFolder("native").toString(), "TempDirectory", pipes));

        assertEquals("spark.kpl.TempDirectory", completed.pipesSetBy());
        completed.pipesIn(Path.of(pipes, "producer-1"));

        assertEquals(Path.of(pipes, "producer-1").toString(), completed.kpl().getTempDirectory());
        assertEquals("settings are read before the move", pipes, completed.settings().get("spark.kpl.TempDirectory"));
    }

    @Test
    public void aDaemonTheUserGaveIsCheckedNotPlaced() throws Exception {
        Path daemon = ProducerConfiguration.placeDaemon(tmp.newFolder("own").toPath());

        ProducerConfiguration completed = ProducerConfiguration.complete(TestConfigs.producer(
            "NativeExecutable", daemon.toString(), "TempDirectory", tmp.newFolder("pipes").toString()));

        assertFalse(completed.placedDaemonDir().isPresent());
        assertEquals(daemon.toString(), completed.kpl().getNativeExecutable());
    }
}
