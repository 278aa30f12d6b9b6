package sparkkpl.config;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Every option of the sink that is not a KPL property, declared once: its name (a DataFrame
 * option, matched case-insensitively), its Spark config key ({@code spark.kpl.<name>}), its
 * default and what it does. docs/options.md is generated from this list.
 */
public enum SinkOption {
    STREAM_NAME(Kind.TEXT, "streamName", null,
        "Default target stream, used for rows whose streamName column is absent or null."),
    STREAM_ARN(Kind.TEXT, "streamArn", null,
        "The target stream by ARN (arn:aws:kinesis:REGION:ACCOUNT:stream/NAME), instead of streamName: the KPL "
            + "gets its name and region (Region, if given, must agree), the sink's own Kinesis calls its ARN. The "
            + "KPL sends names only, so the credentials must be of the stream's account: checked on the driver "
            + "(STS GetCallerIdentity at awsStsEndpoint, or awsRoleArn's account)."),
    QUEUE_LIMIT(Kind.COUNT, "queueLimit", "100000",
        "Most user records outstanding (added, not yet acknowledged) per producer. When reached, "
            + "the adding task flushes and blocks until the producer is below it again. Under both queue limits "
            + "each target shard holds only what Kinesis acknowledges of it in RecordTtl/15 (docs/backpressure.md)."),
    QUEUE_LIMIT_BYTES(Kind.COUNT, "queueLimitBytes", String.valueOf(16L << 20),
        "Most bytes of user data (data plus partition key, as Kinesis counts a record) outstanding per "
            + "producer; same blocking behaviour."),
    ACK_TIMEOUT_MS(Kind.COUNT, "ackTimeoutMs", "600000",
        "How long a task waits at commit for Kinesis to acknowledge its own records before failing "
            + "with the number still outstanding."),
    NATIVE_DIR(Kind.TEXT, ProducerSpec.NATIVE_DIR_OPTION, null,
        "Per-user folder where the KPL's native daemon is placed (default <java.io.tmpdir>/spark-kpl-<user>; in a YARN container, <$TMPDIR or /tmp>/spark-kpl-<user>)."),
    PRODUCER_IDLE_TIMEOUT_MS(Kind.COUNT, "producerIdleTimeoutMs", "60000",
        "How long an executor keeps an unused producer (and its daemon) before closing it."),
    SHUTDOWN_FLUSH_TIMEOUT_MS(Kind.COUNT, "shutdownFlushTimeoutMs", "30000",
        "How long a closing producer (idle or JVM exit) waits for its outstanding records, and a task "
            + "that fails for its rows accepted before the failure."),
    FAIL_ON_ERROR(Kind.FLAG, "failOnError", "true",
        "true: a record that cannot be delivered (Kinesis finally failed it, or the row cannot become a "
            + "record) fails the task, naming it. false: it is counted (records_failed), logged (the first "
            + "few per task, then a summary) and kept under deadLetterPath if set."),
    DEAD_LETTER_PATH(Kind.TEXT, "deadLetterPath", null,
        "With failOnError=false: a folder (any Hadoop file system) receiving the undelivered records as JSON "
            + "lines, one file per task; read back with spark.read.json(path)."),
    MAX_RECORD_BYTES(Kind.COUNT, "maxRecordBytes", String.valueOf(1 << 20),
        "Largest record (data plus partition key, in bytes) sent to Kinesis; a larger row is an undelivered "
            + "record (see failOnError). Kinesis took 1 MiB per record, now up to 10 MiB where the stream allows; "
            + "at most " + KplDerivation.KPL_MAX_RECORD_BYTES + ", the KPL's own limit."),
    NULL_DATA("nullData", "fail",
        "What a row whose data is null does: fail (an undelivered record, see failOnError) or skip (counted as "
            + "records_skipped).", NullData.class),
    PARTITIONER("partitioner", null,
        "Where partition keys come from: random (128 random bits), fixed (the Spark partition id) or column "
            + "(the partitionKey column). Default: column when there is one, else random (or defaultPartition).",
        Partitioner.class),
    DEFAULT_PARTITION(Kind.TEXT, "defaultPartition", null,
        "A constant partition key: for every record when the rows have no partitionKey column, else for rows "
            + "whose partitionKey is null."),
    RECORD_ID("recordId", "none",
        "none, or prefix: put a 48-byte id before each record's data (write id, batch id, Spark partition, "
            + "content digest, occurrence), the same when a task is retried, so consumers can drop duplicates "
            + "(spark_kpl.dedup).", RecordId.class),
    WRITE_NAME(Kind.TEXT, "writeName", null,
        "With recordId=prefix, a batch write: your name for the logical write, in record ids instead of Spark's "
            + "id of this run, so a job run again (after a failure, or a foreachBatch replay) sends the same rows under "
            + "the same ids and spark_kpl.dedup drops the copies. Never give two different writes one name. A "
            + "streaming query names its records by its own id, which its checkpoint keeps."),
    ALLOW_DUPLICATES(Kind.FLAG, "allowDuplicates", "false",
        "Write even when spark.speculation=true, whose duplicate task attempts send the same records twice."),
    FORMAT("format", "raw",
        "raw: the data column is the record. json or avro: every column but partitionKey, explicitHashKey, streamArn and "
            + "streamName is serialized into the record by Spark's own JSON or Avro writer (as to_json / to_avro).",
        Format.class),
    CHECKPOINT_LOCATION(Kind.TEXT, "checkpointLocation", null,
        "Structured Streaming: the query's checkpoint, passed on by Spark from writeStream's option; the sink "
            + "keeps its last delivered micro-batch under it, so a batch Spark replays after a restart is not re-sent."),
    QUERY_NAME(Kind.TEXT, "queryName", null,
        "Structured Streaming: the query's name, passed on by Spark from writeStream.queryName(...); the sink's "
            + "log lines about the query's micro-batches name it."),
    AGGREGATION("aggregation", "executor",
        "Who builds the KPL's aggregated records. executor: the task builds them itself, per target shard "
            + "(docs/aggregation.md), and the KPL sends each as one Kinesis record; AggregationMaxSize sizes them, and "
            + "AggregationEnabled and AggregationMaxCount are the sink's to set. kpl: each row is one KPL user record and "
            + "the KPL aggregates as its own properties say. Unset, it is kpl when AggregationEnabled or "
            + "AggregationMaxCount is given (so AggregationEnabled=false still means records that are never "
            + "aggregated), else executor.", Aggregation.class),
    ORDERING("ordering", "none",
        "none, or key: every row of one partition key that a task writes reaches its shard in the task's row "
            + "order, across throttling, failed records and the KPL's retries (docs/delivery.md). Each task then has "
            + "at most one Kinesis record per shard in flight. Needs aggregation=executor and a stream that places "
            + "records by key (not AUTO).", Ordering.class),
    SCHEMA_REGISTRY_NAME(Kind.TEXT, "schemaRegistryName", null,
        "A Glue Schema Registry: each record's data is the registry's header (its schema version id) and the row in "
            + "Avro (format=avro, the registry's data format AVRO). The driver looks the schema up once per write (registers it with "
            + "schemaAutoRegistration=true); needs the artifact io.github.sparkkpl:spark-kpl-glue (docs/api.md)."),
    SCHEMA_NAME(Kind.TEXT, "schemaName", null,
        "With schemaRegistryName: the schema's name in the registry. Default: the stream's name, as the registry's "
            + "own serializer names it."),
    SCHEMA_AUTO_REGISTRATION(Kind.FLAG, "schemaAutoRegistration", "false",
        "With schemaRegistryName: create the registry, the schema or its new version when absent, instead of "
            + "failing the write on the driver."),
    SCHEMA_COMPATIBILITY("schemaCompatibility", "backward",
        "With schemaAutoRegistration=true: the compatibility mode of a schema the sink creates (none, disabled, "
            + "backward, backward_all, forward, forward_all, full, full_all); a new version of an existing schema is "
            + "checked by the registry against that schema's own mode.", SchemaCompatibility.class),
    SCHEMA_COMPRESSION("schemaCompression", "none",
        "With schemaRegistryName: none, or zlib to deflate each row after the registry's header, as the "
            + "registry's serializer does with compression=ZLIB.", SchemaCompression.class),
    SCHEMA_REGISTRY_ENDPOINT(Kind.TEXT, "schemaRegistryEndpoint", null,
        "With schemaRegistryName: the Glue endpoint URI (default: Glue of the KPL's Region)."),
    AWS_ACCESS_KEY_ID(Kind.TEXT, "awsAccessKeyId", null,
        "Static credentials: the access key id (with awsSecretAccessKey). Never logged nor shown."),
    AWS_SECRET_ACCESS_KEY(Kind.TEXT, "awsSecretAccessKey", null, "Static credentials: the secret access key. Never logged nor shown."),
    AWS_SESSION_TOKEN(Kind.TEXT, "awsSessionToken", null, "Static credentials: a session token, for temporary keys. Never logged nor shown."),
    AWS_PROFILE(Kind.TEXT, "awsProfile", null, "A profile of the AWS credentials/config files, instead of static keys."),
    AWS_ROLE_ARN(Kind.TEXT, "awsRoleArn", null,
        "A role to assume through STS, with the static keys, the profile or else the default chain."),
    AWS_ROLE_SESSION_NAME(Kind.TEXT, "awsRoleSessionName", "spark-kpl", "The session name when assuming awsRoleArn."),
    AWS_STS_ENDPOINT(Kind.TEXT, "awsStsEndpoint", null,
        "The STS endpoint URI for assuming awsRoleArn and for asking the caller's account of stream ARNs "
            + "(default: STS of the KPL's Region)."),
    /** Set by the Python API to collect this write's result on the driver; not for users. */
    RESULT_KEY(Kind.TEXT, "sparkkpl.resultKey", null, "Internal: the key spark_kpl.write reads the write's result by.");

    public static final String CONF_PREFIX = "spark.kpl.";

    /** What an option's text becomes, read once on the driver: the type {@link GivenOptions#get} returns. */
    enum Kind {
        /** The text as given, a String. */
        TEXT,
        /** A whole number above 0, a Long. */
        COUNT,
        /** true or false, a Boolean. */
        FLAG,
        /** One of an enum's constants, written in lower case. */
        CHOICE
    }

    private final Kind kind;
    private final String optionName;
    private final String defaultValue;
    private final String doc;
    /** The enum of a choice option's values; null for other options. */
    private final Class<? extends Enum<?>> choiceType;

    SinkOption(Kind kind, String optionName, String defaultValue, String doc) {
        this(kind, optionName, defaultValue, doc, null);
    }

    SinkOption(String optionName, String defaultValue, String doc, Class<? extends Enum<?>> choiceType) {
        this(Kind.CHOICE, optionName, defaultValue, doc, choiceType);
    }

    private SinkOption(Kind kind, String optionName, String defaultValue, String doc,
                       Class<? extends Enum<?>> choiceType) {
        this.kind = kind;
        this.optionName = optionName;
        this.defaultValue = defaultValue;
        this.doc = doc;
        this.choiceType = choiceType;
    }

    /**
     * The value of this option's text, of its kind's type.
     *
     * @throws IllegalArgumentException naming the option, its config key and what it takes
     */
    Object read(String text) {
        String trimmed = text.trim();
        return switch (kind) {
            case TEXT -> text;
            case COUNT -> {
                try {
                    long parsed = Long.parseLong(trimmed);
                    if (parsed > 0) {
                        yield parsed;
                    }
                } catch (NumberFormatException e) {
                    // reported below
                }
                throw invalid("a whole number above 0", text);
            }
            case FLAG -> {
                if (!trimmed.equalsIgnoreCase("true") && !trimmed.equalsIgnoreCase("false")) {
                    throw invalid("true or false", text);
                }
                yield Boolean.parseBoolean(trimmed);
            }
            case CHOICE -> {
                String wanted = trimmed.toLowerCase(Locale.ROOT);
                for (Enum<?> choice : choiceType.getEnumConstants()) {
                    if (written(choice).equals(wanted)) {
                        yield choice;
                    }
                }
                throw invalid("one of " + String.join(", ", choices()), text);
            }
        };
    }

    IllegalArgumentException invalid(String expected, String value) {
        return new IllegalArgumentException("Invalid value for option '" + optionName + "' (" + confKey()
            + "): expected " + expected + ", got '" + value + "'");
    }

    /** The values a choice option takes, as written (lower case); empty for other options. */
    public List<String> choices() {
        if (choiceType == null) {
            return List.of();
        }
        return Arrays.stream(choiceType.getEnumConstants()).map(SinkOption::written).toList();
    }

    /** A choice as options write it: the enum constant's name in lower case. */
    public static String written(Enum<?> choice) {
        return choice.name().toLowerCase(Locale.ROOT);
    }

    public String optionName() {
        return optionName;
    }

    public String confKey() {
        return CONF_PREFIX + optionName;
    }

    public Optional<String> defaultValue() {
        return Optional.ofNullable(defaultValue);
    }

    public String doc() {
        return doc;
    }

    /** Credentials: masked wherever a configuration is shown or logged. */
    public boolean isSecret() {
        return this == AWS_ACCESS_KEY_ID || this == AWS_SECRET_ACCESS_KEY || this == AWS_SESSION_TOKEN;
    }

    public boolean isInternal() {
        return this == RESULT_KEY;
    }

    /**
     * Whether it may be a {@code spark.kpl.*} key. What names one query may not: a checkpoint set for
     * the whole session would make every streaming query share it (and fail every batch write).
     */
    public boolean isConfigKey() {
        return !isInternal() && this != CHECKPOINT_LOCATION && this != QUERY_NAME;
    }

    static Optional<SinkOption> byName(String name) {
        String wanted = name.toLowerCase(Locale.ROOT);
        for (SinkOption option : values()) {
            if (option.optionName.toLowerCase(Locale.ROOT).equals(wanted)) {
                return Optional.of(option);
            }
        }
        return Optional.empty();
    }
}
