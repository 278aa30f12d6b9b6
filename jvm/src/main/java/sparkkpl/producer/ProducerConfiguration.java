package sparkkpl.producer;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Optional;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.aws.AwsRegion;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.natives.NativeDaemon;

/**
 * The KPL configuration one producer starts with, completed from its spec: the properties given and
 * the sink's defaults ({@link ProducerSpec#producerConfiguration}), the daemon the sink placed, the
 * folder of the daemon's pipes, the credentials and the region.
 */
final class ProducerConfiguration {
    private final KinesisProducerConfiguration kpl;
    /** Null when the user gave the daemon (NativeExecutable). */
    private final Path placedDaemonDir;
    private final String pipesSetBy;
    private final Map<String, String> settings;

    private ProducerConfiguration(KinesisProducerConfiguration kpl, Path placedDaemonDir, String pipesSetBy,
                                  Map<String, String> settings) {
        this.kpl = kpl;
        this.placedDaemonDir = placedDaemonDir;
        this.pipesSetBy = pipesSetBy;
        this.settings = settings;
    }

    /**
     * Places the native daemon unless the user gave one: placing it ourselves keeps the KPL from
     * extracting it into a folder shared by every user, under a lock that a task interrupt breaks.
     *
     * @throws Credentials.Unavailable when the spec's credentials give none
     */
    static ProducerConfiguration complete(ProducerSpec spec) {
        KinesisProducerConfiguration kpl = spec.producerConfiguration();
        Path dir = spec.nativeDir().orElseGet(NativeDaemon::defaultDir);
        Path placedDaemonDir = null;
        if (kpl.getNativeExecutable().isEmpty()) {
            NativeDaemon.Placement placed = NativeDaemon.installHereOrInOwnFolder(dir, ProducerSpec.NATIVE_DIR_KEY);
            kpl.setNativeExecutable(NativeDaemon.launcherOf(placed.executable()).toString());
            dir = placed.dir(); // the pipes follow the daemon into this user's own folder
            placedDaemonDir = dir;
        } else {
            NativeDaemon.checkGivenExecutable(Paths.get(kpl.getNativeExecutable()), ProducerSpec.kplKey("NativeExecutable"));
        }
        // The daemon's named pipes too, or they land in a folder every user of the host shares.
        String pipesSetBy = ProducerSpec.kplKey("TempDirectory");
        if (kpl.getTempDirectory().isEmpty()) {
            kpl.setTempDirectory(dir.toString());
            pipesSetBy = ProducerSpec.NATIVE_DIR_KEY;
        }
        // Given no region, the daemon's own lookup asks the fixed metadata address, whatever
        // AWS_EC2_METADATA_SERVICE_ENDPOINT says, and exits without one: the JVM looks it up instead.
        kpl.setRegion(AwsRegion.of(kpl));
        kpl.setCredentialsProvider(Credentials.checkedProvider(spec.credentials(), kpl.getRegion()));
        // Read back before the pipes move into the producer's own folder (pipesIn).
        return new ProducerConfiguration(kpl, placedDaemonDir, pipesSetBy, spec.settings(kpl));
    }

    /** Places the daemon in {@code dir} (or finds it in place); a refusal names {@code spark.kpl.nativeDir}. */
    static Path placeDaemon(Path dir) {
        return NativeDaemon.install(dir, ProducerSpec.NATIVE_DIR_KEY);
    }

    /** The folder the sink placed the daemon in, to put it back should it vanish; empty if the user gave it. */
    Optional<Path> placedDaemonDir() {
        return Optional.ofNullable(placedDaemonDir);
    }

    /** The folder under which each producer gets a folder of its own for its daemon's pipes. */
    Path pipesRoot() {
        return Paths.get(kpl.getTempDirectory());
    }

    /** The config key that chose {@link #pipesRoot}, for errors about it. */
    String pipesSetBy() {
        return pipesSetBy;
    }

    /** The producer's own folder for its daemon's pipes, below {@link #pipesRoot}. */
    void pipesIn(Path folder) {
        kpl.setTempDirectory(folder.toString());
    }

    /** What the producer runs with, by config key, secrets masked. */
    Map<String, String> settings() {
        return settings;
    }

    KinesisProducerConfiguration kpl() {
        return kpl;
    }
}
