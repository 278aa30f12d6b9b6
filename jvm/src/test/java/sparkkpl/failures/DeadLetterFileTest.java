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
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.junit.Rule;
import org.junit.Test;
import org.junit.rules.TemporaryFolder;
import sparkkpl.kinesis.KinesisRecord;

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

    /** The local file system, but permissions set after creation are ignored: the file must be born owner-only. */
    public static class LatePermissionsIgnoredFileSystem extends RawLocalFileSystem {
        @Override
        public void setPermission(org.apache.hadoop.fs.Path path, FsPermission permission) {}
    }

    @Test
    public void aLocalFileIsOwnerOnlyFromItsCreation() throws Exception {
        DeadLetterFile file = fileOn("file", LatePermissionsIgnoredFileSystem.class, "part-2-attempt-0.json");

        file.write(FAILED, 2);

        Path inProgress = tmp.getRoot().toPath().resolve(".part-2-attempt-0.json.inprogress");
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(inProgress)));
        file.commit();
        assertTrue(Files.readString(tmp.getRoot().toPath().resolve("part-2-attempt-0.json")).contains("\"row\":3"));
    }

    /** A file system that is not local: it records the permission each file is created with. */
    public static final class RemoteFileSystem extends LatePermissionsIgnoredFileSystem {
        static final List<FsPermission> CREATED_WITH = new CopyOnWriteArrayList<>();

        @Override
        public URI getUri() {
            return URI.create("remote:///");
        }

        @Override
        public FSDataOutputStream create(org.apache.hadoop.fs.Path path, FsPermission permission, boolean overwrite,
                                         int bufferSize, short replication, long blockSize, Progressable progress)
                throws IOException {
            CREATED_WITH.add(permission);
            return super.create(path, permission, overwrite, bufferSize, replication, blockSize, progress);
        }
    }

    @Test
    public void aFileElsewhereIsCreatedWithOwnerOnlyPermissions() throws Exception {
        RemoteFileSystem.CREATED_WITH.clear();
        DeadLetterFile file = fileOn("remote", RemoteFileSystem.class, "part-3-attempt-0.json");

        file.write(FAILED, 3);
        file.commit();

        assertEquals(List.of(new FsPermission((short) 0600)), RemoteFileSystem.CREATED_WITH);
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
        DeadLetterFile file = fileOn("renamefails", RenameFailsFileSystem.class, "part-1-attempt-0.json");
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

    /** A file in the test's folder, reached through {@code fileSystem} under {@code scheme}. */
    private DeadLetterFile fileOn(String scheme, Class<? extends FileSystem> fileSystem, String name) {
        Configuration conf = new Configuration();
        conf.set("fs." + scheme + ".impl", fileSystem.getName());
        conf.setBoolean("fs." + scheme + ".impl.disable.cache", true);
        return new DeadLetterFile(new DeadLetterFile.Location(scheme + "://" + tmp.getRoot(), conf), name);
    }

    private DeadLetterFile.Location location() {
        return new DeadLetterFile.Location(tmp.getRoot().toString(), new Configuration());
    }
}
