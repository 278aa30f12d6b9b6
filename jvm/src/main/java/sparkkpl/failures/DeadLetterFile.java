package sparkkpl.failures;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.Base64;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.fs.Path;
import org.apache.spark.util.SerializableConfiguration;
import sparkkpl.util.JsonText;

/**
 * One task attempt's file of records that did not reach Kinesis, as JSON lines that
 * {@code spark.read.json(deadLetterPath)} reads back. It is written under a hidden name (Spark's
 * readers skip names starting with a dot) and renamed to its final name when the task commits, so a
 * failed or retried attempt never leaves its records behind twice. The records' data is the user's,
 * so the file is readable by its owner only.
 */
public final class DeadLetterFile {
    private static final FsPermission OWNER_ONLY = new FsPermission((short) 0600);
    private static final FileAttribute<?> OWNER_ONLY_AT_CREATION =
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final Set<StandardOpenOption> CREATE_NEW =
        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    private static final String LOCAL_SCHEME = "file";

    /** Where dead-letter files go, with the Hadoop configuration to reach it; shipped to executors. */
    public static final class Location implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String directory;
        private final SerializableConfiguration hadoopConf;

        public Location(String directory, Configuration hadoopConf) {
            this.directory = directory;
            this.hadoopConf = new SerializableConfiguration(hadoopConf);
        }

        /** Creates the folder on the driver, so an unusable path fails before any task starts. */
        public void create() throws IOException {
            Path path = new Path(directory);
            if (!path.getFileSystem(hadoopConf.value()).mkdirs(path)) {
                throw new IOException("Could not create the deadLetterPath folder " + directory);
            }
        }

        /**
         * Whether the path names each machine's own disk although the user did not say so: no scheme,
         * resolved to the local file system. An explicit {@code file:} URI is the user's word that the
         * folder is mounted at that path on every node.
         */
        public boolean implicitlyLocal() throws IOException {
            Path path = new Path(directory);
            return path.toUri().getScheme() == null
                && path.getFileSystem(hadoopConf.value()) instanceof LocalFileSystem;
        }
    }

    private final Location location;
    private final String name;
    private OutputStream out;

    /** @param name unique to this task attempt */
    public DeadLetterFile(Location location, String name) {
        this.location = location;
        this.name = name;
    }

    void write(FailedRecord failure, int sparkPartition) throws IOException {
        if (out == null) {
            out = createOwnerOnly(inProgressPath());
        }
        out.write(toJson(failure, sparkPartition).getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Creates the file readable by its owner only from the start: Hadoop's local file systems
     * create a file, then set its permissions, so a local file is opened with its mode by java.nio.
     */
    private OutputStream createOwnerOnly(Path path) throws IOException {
        FileSystem fs = fileSystem();
        if (LOCAL_SCHEME.equals(fs.getUri().getScheme())) {
            return new BufferedOutputStream(Channels.newOutputStream(Files.newByteChannel(
                Paths.get(fs.makeQualified(path).toUri()), CREATE_NEW, OWNER_ONLY_AT_CREATION)));
        }
        return fs.create(path, OWNER_ONLY, false, fs.getConf().getInt("io.file.buffer.size", 4096),
            fs.getDefaultReplication(path), fs.getDefaultBlockSize(path), null);
    }

    /**
     * Makes the file visible under its final name; called before the task commits. When that fails
     * the in-progress file is removed and the task fails: its retry writes the records again.
     */
    void commit() throws IOException {
        if (out != null) {
            out.close();
            out = null;
            boolean renamed = false;
            try {
                renamed = fileSystem().rename(inProgressPath(), finalPath());
            } finally {
                if (!renamed) {
                    fileSystem().delete(inProgressPath(), false);
                }
            }
            if (!renamed) {
                throw new IOException("Could not rename the dead-letter file " + inProgressPath() + " to "
                    + finalPath() + "; it was removed, and this task fails so that its retry writes it again");
            }
        }
    }

    /** Drops the attempt's file: its rows are written again by the next attempt. */
    void abort() throws IOException {
        if (out != null) {
            out.close();
            out = null;
            fileSystem().delete(inProgressPath(), false);
        }
    }

    private FileSystem fileSystem() throws IOException {
        return finalPath().getFileSystem(location.hadoopConf.value());
    }

    private Path finalPath() {
        return new Path(location.directory, name);
    }

    private Path inProgressPath() {
        return new Path(location.directory, "." + name + ".inprogress");
    }

    static String toJson(FailedRecord failure, int sparkPartition) {
        var record = failure.record();
        String data = record.data() == null ? null : Base64.getEncoder().encodeToString(record.data());
        return "{" + field("data", data) + "," + describe(failure, sparkPartition) + "}\n";
    }

    /**
     * The record's JSON fields other than its data, named as a failOnError error's tag names them
     * ({@code ErrorTag.Kind.RECORDS_NOT_DELIVERED}), which leaves out the data: it could be megabytes.
     */
    static String describe(FailedRecord failure, int sparkPartition) {
        var record = failure.record();
        return String.join(",", field("partitionKey", record.partitionKey()),
            field("explicitHashKey", record.explicitHashKey()), field("stream", record.stream()),
            field("errorCode", failure.errorCode()), field("errorMessage", failure.errorMessage()),
            "\"sparkPartition\":" + sparkPartition, "\"row\":" + failure.rowNumber());
    }

    private static String field(String name, String value) {
        return "\"" + name + "\":" + JsonText.quoted(value);
    }
}
