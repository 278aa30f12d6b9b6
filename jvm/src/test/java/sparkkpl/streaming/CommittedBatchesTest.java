package sparkkpl.streaming;

import static org.junit.Assert.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;

/** The last delivered micro-batch, kept as marker files on a local Hadoop file system. */
public class CommittedBatchesTest {
    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    private CommittedBatches batches() {
        return new CommittedBatches(tmp.getRoot() + "/kpl-sink", new Configuration());
    }

    private List<String> files() throws Exception {
        try (Stream<Path> files = Files.list(tmp.getRoot().toPath().resolve("kpl-sink"))) {
            return files.map(file -> file.getFileName().toString()).filter(name -> !name.endsWith(".crc")).sorted()
                .toList();
        }
    }

    @Test
    public void nothingIsCommittedBeforeTheFirstBatch() throws Exception {
        assertEquals(CommittedBatches.NONE, batches().last());
    }

    @Test
    public void theLastCommittedBatchIsReadBackByAnotherInstanceAndOlderMarkersGo() throws Exception {
        batches().commit(3);
        batches().commit(5);

        assertEquals(5, batches().last());
        assertEquals("one whole marker, no temporary file", List.of("5"), files());
    }

    /** The driver writes the marker while it checks the stream: only a passed check publishes it. */
    @Test
    public void aPreparedBatchCountsOnlyOncePublished() throws Exception {
        batches().commit(3);
        CommittedBatches.Prepared prepared = batches().prepare(4);

        assertEquals(3, batches().last());
        batches().publish(prepared);
        assertEquals(4, batches().last());
        assertEquals(List.of("4"), files());
    }

    @Test
    public void filesThatAreNoBatchIdAreIgnored() throws Exception {
        batches().commit(2);
        Files.createFile(tmp.getRoot().toPath().resolve("kpl-sink/notes.txt"));

        assertEquals(2, batches().last());
    }
}
