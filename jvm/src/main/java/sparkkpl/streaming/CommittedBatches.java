package sparkkpl.streaming;

import java.io.IOException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * The last micro-batch whose records the sink has delivered, kept under the query's checkpoint. Spark
 * records a batch in its own commit log only after the sink committed it; a crash in between makes
 * Spark run the batch again on restart, and this is how the sink knows not to send it twice.
 * Used on the driver only. Each committed batch is a file named by its id, written under a temporary name and renamed, so a
 * reader sees a whole marker or none on any Hadoop file system.
 */
public final class CommittedBatches {
    public static final long NONE = -1;

    private final String directory;
    private final Configuration hadoopConf;

    public CommittedBatches(String directory, Configuration hadoopConf) {
        this.directory = directory;
        this.hadoopConf = hadoopConf;
    }

    public String directory() {
        return directory;
    }

    /** The highest batch id committed, or {@link #NONE}. */
    public long last() throws IOException {
        Path dir = new Path(directory);
        FileSystem fs = dir.getFileSystem(hadoopConf);
        if (!fs.exists(dir)) {
            return NONE;
        }
        long last = NONE;
        for (FileStatus file : fs.listStatus(dir)) {
            String name = file.getPath().getName();
            if (name.chars().allMatch(Character::isDigit)) {
                last = Math.max(last, Long.parseLong(name));
            }
        }
        return last;
    }

    /** Records {@code batchId} as committed, then drops the markers of older batches. */
    public void commit(long batchId) throws IOException {
        Path dir = new Path(directory);
        FileSystem fs = dir.getFileSystem(hadoopConf);
        fs.mkdirs(dir);
        Path temporary = new Path(dir, "." + batchId + ".tmp");
        try (FSDataOutputStream out = fs.create(temporary, true)) {
            out.hsync();
        }
        Path marker = new Path(dir, String.valueOf(batchId));
        if (!fs.rename(temporary, marker)) {
            throw new IOException("Could not rename " + temporary + " to " + marker);
        }
        for (FileStatus file : fs.listStatus(dir)) {
            String name = file.getPath().getName();
            if (name.chars().allMatch(Character::isDigit) && Long.parseLong(name) < batchId) {
                fs.delete(file.getPath(), false);
            }
        }
    }
}
