package sparkkpl.failures;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.producer.FailedRecord;
import sparkkpl.producer.KinesisRecord;

/** A task attempt's dead-letter file on a local Hadoop file system. */
public class DeadLetterFileTest {
    private static final FailedRecord FAILED = new FailedRecord(
        new KinesisRecord("s", "key", null, "secret data".getBytes(StandardCharsets.UTF_8)), 3, null, "Expired", "late");

    @Rule
    public final TemporaryFolder tmp = new TemporaryFolder();

    @Test
    public void theCommittedFileIsReadableByItsOwnerOnly() throws Exception {
        DeadLetterFile file = new DeadLetterFile(location(), "part-0-attempt-0.json");
        file.write(FAILED, 0);

        file.commit();

        Path committed = tmp.getRoot().toPath().resolve("part-0-attempt-0.json");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(committed)));
        assertTrue(Files.readString(committed).contains("\"row\":3"));
    }

    /** A local file system whose rename fails, as an object store's or a full HDFS's can. */
    public static final class RenameFailsFileSystem extends RawLocalFileSystem {
        @Override
        public URI getUri() {
            return URI.create("renamefails:///");
        }

        @Override
        public boolean rename(org.apache.hadoop.fs.Path src, org.apache.hadoop.fs.Path dst) {
            return false;
        }
    }

    @Test
    public void aFailedRenameLeavesNoInProgressFileAndFailsTheTask() throws Exception {
        Configuration conf = new Configuration();
        conf.set("fs.renamefails.impl", RenameFailsFileSystem.class.getName());
        conf.setBoolean("fs.renamefails.impl.disable.cache", true);
        DeadLetterFile file = new DeadLetterFile(
            new DeadLetterFile.Location("renamefails://" + tmp.getRoot(), conf), "part-1-attempt-0.json");
        file.write(FAILED, 1);
        try (Stream<Path> written = Files.list(tmp.getRoot().toPath())) {
            assertTrue("written in progress first", written.anyMatch(p -> p.getFileName().toString().endsWith(".inprogress")));
        }

        IOException error = assertThrows(IOException.class, file::commit);

        assertTrue(error.getMessage(), error.getMessage().contains("this task fails so that its retry writes it again"));
        try (Stream<Path> left = Files.list(tmp.getRoot().toPath())) {
            assertFalse("nothing in progress is left", left.anyMatch(p -> p.getFileName().toString().contains("inprogress")));
        }
    }

    private DeadLetterFile.Location location() {
        return new DeadLetterFile.Location(tmp.getRoot().toString(), new Configuration());
    }
}
