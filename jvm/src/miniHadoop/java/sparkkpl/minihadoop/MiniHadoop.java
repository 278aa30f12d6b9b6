package sparkkpl.minihadoop;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.MiniYARNCluster;

/**
 * YARN (a ResourceManager and NodeManagers) and HDFS (a NameNode and a DataNode) from Hadoop's mini
 * clusters, all on 127.0.0.1, as one process that tests/sink/deploy/test_yarn.py starts and stops by pid.
 *
 * <p>Arguments: the folder for the clusters' files (also the working directory: MiniYARNCluster
 * keeps its files under {@code ./target}), the folder to write the client configuration to
 * ({@code core-site.xml}, {@code hdfs-site.xml}, {@code yarn-site.xml}, for HADOOP_CONF_DIR), and the
 * number of NodeManagers. Prints {@code READY} once every NodeManager has registered, then runs until
 * stdin closes or the process is signalled; the shutdown hook stops both clusters.
 */
public final class MiniHadoop {
    private static final String LOOPBACK = "127.0.0.1";
    private static final long NODE_MANAGERS_TIMEOUT_MS = 120_000;

    private MiniHadoop() {}

    public static void main(String[] args) throws Exception {
        Path work = Paths.get(args[0]).toAbsolutePath();
        Path confDir = Paths.get(args[1]).toAbsolutePath();
        int nodeManagers = Integer.parseInt(args[2]);

        Configuration conf = new YarnConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, work.resolve("hdfs").toString());
        MiniDFSCluster hdfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        Runtime.getRuntime().addShutdownHook(new Thread(hdfs::shutdown, "stop-hdfs"));
        hdfs.waitActive();
        conf.set("fs.defaultFS", hdfs.getURI().toString());

        bindToLoopback(conf);
        sizeForSpark(conf);
        MiniYARNCluster yarn = new MiniYARNCluster("spark-kpl", nodeManagers, 1, 1);
        yarn.init(conf);
        yarn.start();
        Runtime.getRuntime().addShutdownHook(new Thread(yarn::stop, "stop-yarn"));
        if (!yarn.waitForNodeManagersToConnect(NODE_MANAGERS_TIMEOUT_MS)) {
            throw new IllegalStateException(nodeManagers + " NodeManagers did not register within "
                + NODE_MANAGERS_TIMEOUT_MS + " ms");
        }

        // Only what a client needs, as a cluster's own files would give it: the mini clusters' full
        // configs name test-only classes (a static rack mapping) that Spark's YARN client cannot load.
        Files.createDirectories(confDir);
        Configuration core = new Configuration(false);
        core.set("fs.defaultFS", hdfs.getURI().toString());
        writeAtomically(core, confDir.resolve("core-site.xml"));
        Configuration hdfsSite = new Configuration(false);
        hdfsSite.set("dfs.replication", "1");
        writeAtomically(hdfsSite, confDir.resolve("hdfs-site.xml"));
        Configuration yarnSite = new Configuration(false);
        for (Map.Entry<String, String> entry : yarn.getConfig()) {
            if (entry.getKey().startsWith("yarn.resourcemanager.") && entry.getKey().endsWith("address")) {
                yarnSite.set(entry.getKey(), entry.getValue());
            }
        }
        writeAtomically(yarnSite, confDir.resolve("yarn-site.xml"));
        System.out.println("READY " + hdfs.getURI());
        System.out.flush();
        while (System.in.read() >= 0) {
            // Runs until the harness closes our stdin (or signals us).
        }
        System.exit(0);
    }

    /** Every server binds 127.0.0.1, whatever address the host name has. */
    private static void bindToLoopback(Configuration conf) {
        conf.set(YarnConfiguration.RM_BIND_HOST, LOOPBACK);
        conf.set(YarnConfiguration.NM_BIND_HOST, LOOPBACK);
        conf.set(YarnConfiguration.TIMELINE_SERVICE_BIND_HOST, LOOPBACK);
        conf.set("yarn.resourcemanager.hostname", LOOPBACK);
        conf.set("yarn.nodemanager.hostname", LOOPBACK);
    }

    /** Room for a Spark driver and a few executors of 512 MB on a small machine; no memory policing. */
    private static void sizeForSpark(Configuration conf) {
        conf.setInt(YarnConfiguration.NM_PMEM_MB, 4096);
        conf.setInt(YarnConfiguration.NM_VCORES, 8);
        conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 128);
        conf.setBoolean(YarnConfiguration.NM_PMEM_CHECK_ENABLED, false);
        conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false);
        conf.setFloat(YarnConfiguration.NM_MAX_PER_DISK_UTILIZATION_PERCENTAGE, 99.5f);
    }

    private static void writeAtomically(Configuration conf, Path target) throws IOException {
        File partial = new File(target + ".partial");
        try (OutputStream out = new FileOutputStream(partial)) {
            conf.writeXml(out);
        }
        Files.move(partial.toPath(), target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
