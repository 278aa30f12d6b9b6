package sparkkpl.spark;

import java.io.IOException;
import java.io.OutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.util.SerializableConfiguration;
import sparkkpl.producer.FailedRecord;

/**
 * One task attempt's file of records that did not reach Kinesis, as JSON lines that
 * {@code spark.read.json(deadLetterPath)} reads back. It is written under a hidden name (Spark's
 * readers skip names starting with a dot) and renamed to its final name when the task commits, so a
 * failed or retried attempt never leaves its records behind twice.
 */
final class DeadLetterFile {
    /** Where dead-letter files go, with the Hadoop configuration to reach it; shipped to executors. */
    static final class Location implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String directory;
        private final SerializableConfiguration hadoopConf;

        Location(String directory, Configuration hadoopConf) {
            this.directory = directory;
            this.hadoopConf = new SerializableConfiguration(hadoopConf);
        }

        /** Creates the folder on the driver, so an unusable path fails before any task starts. */
        void create() throws IOException {
            Path path = new Path(directory);
            if (!path.getFileSystem(hadoopConf.value()).mkdirs(path)) {
                throw new IOException("Could not create the deadLetterPath folder " + directory);
            }
        }
    }

    private final Location location;
    private final String name;
    private OutputStream out;

    /** @param name unique to this task attempt */
    DeadLetterFile(Location location, String name) {
        this.location = location;
        this.name = name;
    }

    void write(FailedRecord failure, int sparkPartition) throws IOException {
        if (out == null) {
            out = fileSystem().create(inProgressPath(), false);
        }
        out.write(toJson(failure, sparkPartition).getBytes(StandardCharsets.UTF_8));
    }

    /** Makes the file visible under its final name; called before the task commits. */
    void commit() throws IOException {
        if (out != null) {
            out.close();
            out = null;
            if (!fileSystem().rename(inProgressPath(), finalPath())) {
                throw new IOException("Could not rename the dead-letter file " + inProgressPath() + " to " + finalPath());
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
        StringBuilder json = new StringBuilder(256).append('{');
        field(json, "data", record.data() == null ? null : Base64.getEncoder().encodeToString(record.data()));
        field(json, "partitionKey", record.partitionKey());
        field(json, "explicitHashKey", record.explicitHashKey());
        field(json, "stream", record.stream());
        field(json, "errorCode", failure.errorCode());
        field(json, "errorMessage", failure.errorMessage());
        json.append("\"sparkPartition\":").append(sparkPartition).append(",\"row\":").append(failure.rowNumber());
        return json.append("}\n").toString();
    }

    private static void field(StringBuilder json, String name, String value) {
        json.append('"').append(name).append("\":");
        if (value == null) {
            json.append("null,");
            return;
        }
        json.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        json.append("\",");
    }
}
