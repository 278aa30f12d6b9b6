package sparkkpl.config;

import java.io.Serializable;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

/**
 * What one KPL producer is made of, read and checked on the driver: the KPL properties, the sink
 * options that shape a producer, and where its credentials come from. Equal specs share a producer on
 * an executor (the producer pool's key), so equality covers exactly what makes a producer different.
 */
public final class ProducerSpec implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The option naming the daemon's folder; the option table takes its name from here. */
    public static final String NATIVE_DIR_OPTION = "nativeDir";
    /**
     * Its config key, for errors about it on an executor: a constant, so that tasks do not load the
     * option table for it.
     */
    public static final String NATIVE_DIR_KEY = SinkOption.CONF_PREFIX + NATIVE_DIR_OPTION;

    /**
     * The sink options that shape a producer, named after them ({@link OptionGroups}).
     *
     * @param queueLimit most user records outstanding per producer
     * @param queueLimitBytes most bytes of user records outstanding per producer
     * @param nativeDir null for the default folder
     * @param credentials where its AWS credentials come from (the aws* options)
     * @param streamArn optional: the stream by ARN, whose account and region the sink's own Kinesis calls address
     */
    public record Options(long queueLimit, long queueLimitBytes, String nativeDir, long producerIdleTimeoutMs,
                          long shutdownFlushTimeoutMs, CredentialSource credentials, String streamArn)
        implements Serializable {}

    /** The KPL properties: the user's, and those the sink derives from its options. */
    private final KplValues kpl;
    /** aggregation=executor: the KPL gets complete aggregates, so only gathers them into calls. */
    private final boolean tasksAggregate;
    private final Options options;
    /** The options above by config key, secrets masked: derived from them, so outside equality. */
    private final Map<String, String> shownOptions;
    /** Derived once here from the KPL properties, so that tasks read numbers instead of rebuilding them. */
    private final long recordAnswerTimeoutMs;
    private final long recordMaxBufferedTimeMs;
    /** The pool looks a spec up per task and per shard-map refresh: hash it once. */
    private final int hash;

    ProducerSpec(KplValues kpl, boolean tasksAggregate, Options options, Map<String, String> shownOptions) {
        this.kpl = kpl;
        this.tasksAggregate = tasksAggregate;
        this.options = options;
        this.shownOptions = Collections.unmodifiableMap(new TreeMap<>(shownOptions));
        this.recordMaxBufferedTimeMs = kplConfiguration().getRecordMaxBufferedTime();
        this.recordAnswerTimeoutMs = producerConfiguration().getUserRecordTimeoutInMillis();
        this.hash = Objects.hash(kpl, tasksAggregate, options);
    }

    /** A spec of the same options for a producer of these KPL properties, which the tasks do not aggregate for. */
    ProducerSpec unaggregated(KplValues unaggregatedKpl) {
        return new ProducerSpec(unaggregatedKpl, false, options, shownOptions);
    }

    /** The KPL properties as given and derived, by canonical name (credentials included: never log them). */
    public Map<String, String> kplProperties() {
        return kpl.asText();
    }

    /** A fresh KPL configuration with the properties set (the driver checked them with the KPL's own setters). */
    public KinesisProducerConfiguration kplConfiguration() {
        return kpl.configuration();
    }

    /**
     * The KPL configuration a producer starts from (before the daemon's placement and credentials): the
     * properties, and the sink's own choice for those the user did not set ({@link KplDefaults}).
     */
    public KinesisProducerConfiguration producerConfiguration() {
        return KplDefaults.applied(kplConfiguration(), kpl.names(), tasksAggregate);
    }

    /** Whether the user set the KPL's LogLevel: the switch that makes the KPL and its daemon speak. */
    public boolean kplLogsVerbosely() {
        return kpl.isSet(KplDefaults.LOG_LEVEL);
    }

    /** Most user records outstanding per producer (queueLimit). */
    public long queueLimit() {
        return options.queueLimit();
    }

    /** Most bytes of user records outstanding per producer (queueLimitBytes). */
    public long queueLimitBytes() {
        return options.queueLimitBytes();
    }

    /** The folder the daemon is placed in when the user named one (nativeDir). */
    public Optional<Path> nativeDir() {
        return Optional.ofNullable(options.nativeDir()).map(Paths::get);
    }

    public long producerIdleTimeoutMs() {
        return options.producerIdleTimeoutMs();
    }

    public long shutdownFlushTimeoutMs() {
        return options.shutdownFlushTimeoutMs();
    }

    public CredentialSource credentials() {
        return options.credentials();
    }

    /** Null, or the streamArn option: the sink's own Kinesis calls name streams by ARN in its account. */
    public String streamArn() {
        return options.streamArn();
    }

    /**
     * How long the KPL may take to answer for a record before the sink counts it as lost and fails its
     * task: the KPL's UserRecordTimeoutInMillis as a producer of this spec runs with it.
     */
    public long recordAnswerTimeoutMs() {
        return recordAnswerTimeoutMs;
    }

    /** The KPL's RecordMaxBufferedTime as the user gave it (or the KPL's default): how long records may wait. */
    public long recordMaxBufferedTimeMs() {
        return recordMaxBufferedTimeMs;
    }

    /**
     * What a producer of this spec runs with, by config key: the sink options that shape it, and every
     * KPL property as {@code kplConfig} (the one handed to the KPL) holds it.
     */
    public Map<String, String> settings(KinesisProducerConfiguration kplConfig) {
        Map<String, String> settings = new TreeMap<>(shownOptions);
        KplProperties.readBack(kplConfig).forEach((name, value) -> settings.put(kplKey(name), value));
        return Collections.unmodifiableMap(settings);
    }

    /** The config key of a KPL property, for errors and settings by config key. */
    public static String kplKey(String property) {
        return SinkOption.CONF_PREFIX + property;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ProducerSpec spec && kpl.equals(spec.kpl)
            && tasksAggregate == spec.tasksAggregate && options.equals(spec.options);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /** The sink options that shape it and the KPL properties given, by config key, secrets masked. */
    @Override
    public String toString() {
        Map<String, String> shown = new TreeMap<>(shownOptions);
        kpl.asText().forEach((name, value) ->
            shown.put(kplKey(name), KplProperties.isSecret(name) ? KplProperties.MASK : value));
        return "ProducerSpec" + shown;
    }
}
