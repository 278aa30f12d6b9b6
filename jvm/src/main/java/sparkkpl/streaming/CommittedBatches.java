package sparkkpl.streaming;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
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
        publish(prepare(batchId));
    }

    /** A batch's marker written under a temporary name, and the older markers to drop once it is published. */
    public record Prepared(long batchId, Path temporary, List<Path> older) {}

    /**
     * Writes {@code batchId}'s marker under a temporary name, synced, which {@link #last} does not
     * read: the driver writes it while it checks the stream, and publishes it only if the check passed.
     */
    public Prepared prepare(long batchId) throws IOException {
        Path dir = new Path(directory);
        FileSystem fs = dir.getFileSystem(hadoopConf);
        fs.mkdirs(dir);
        Path temporary = new Path(dir, "." + batchId + ".tmp");
        try (FSDataOutputStream out = fs.create(temporary, true)) {
            out.hsync();
        }
        List<Path> older = new ArrayList<>();
        for (FileStatus file : fs.listStatus(dir)) {
            String name = file.getPath().getName();
            if (name.chars().allMatch(Character::isDigit) && Long.parseLong(name) < batchId) {
                older.add(file.getPath());
            }
        }
        return new Prepared(batchId, temporary, older);
    }

    /** Makes a prepared marker the committed batch (a rename: whole or not at all), then drops the older ones. */
    public void publish(Prepared prepared) throws IOException {
        FileSystem fs = prepared.temporary().getFileSystem(hadoopConf);
        Path marker = new Path(new Path(directory), String.valueOf(prepared.batchId()));
        if (!fs.rename(prepared.temporary(), marker)) {
            throw new IOException("Could not rename " + prepared.temporary() + " to " + marker);
        }
        for (Path older : prepared.older()) {
            fs.delete(older, false);
        }
    }
}
