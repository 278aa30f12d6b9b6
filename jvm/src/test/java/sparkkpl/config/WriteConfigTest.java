package sparkkpl.config;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertThrows;

import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.Test;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import software.amazon.kinesis.producer.KinesisProducerConfiguration.RecordDistributionStrategyDefault;

public class WriteConfigTest {
    private static WriteOptions read(String... keysAndValues) {
        return TestConfigs.read(keysAndValues);
    }

    private static ProducerSpec producer(String... keysAndValues) {
        return TestConfigs.producer(keysAndValues);
    }

    private static String errorOf(String... keysAndValues) {
        return assertThrows(IllegalArgumentException.class, () -> read(keysAndValues)).getMessage();
    }

    private static void assertContains(String message, String... parts) {
        for (String part : parts) {
            assertTrue("'" + message + "' should contain '" + part + "'", message.contains(part));
        }
    }

    /**
     * Every sink option is read once into a component of its own name (a group of WriteOptions, the
     * producer's options, or CredentialSource for the aws* ones), which is all executors receive: none is
     * parsed again there, and a new option cannot be forgotten.
     */
    @Test
    public void everySinkOptionBecomesAValueOfItsOwnName() {
        Set<String> values = new HashSet<>();
        for (Class<?> type : List.of(WriteOptions.Target.class, WriteOptions.Delivery.class,
                WriteOptions.RecordShape.class, WriteOptions.Registry.class, WriteOptions.Aggregating.class,
                WriteOptions.Query.class, ProducerSpec.Options.class)) {
            for (RecordComponent component : type.getRecordComponents()) {
                assertTrue("one group per option: " + component.getName(), values.add(component.getName()));
            }
        }
        for (RecordComponent component : CredentialSource.class.getRecordComponents()) {
            String name = component.getName();
            values.add("aws" + Character.toUpperCase(name.charAt(0)) + name.substring(1));
        }
        List<String> missing = Arrays.stream(SinkOption.values()).filter(option -> !option.isInternal())
            .map(SinkOption::optionName).filter(name -> !values.contains(name)).toList();
        assertEquals(List.of(), missing);
        assertEquals(7L, read("queueLimit", " 7").producer().queueLimit());
        assertEquals("s", read("streamName", "s").target().streamName());
    }

    /** Derived from the write's parsed values, the AUTO variant is what the same write would parse to one record per row. */
    @Test
    public void theAutoVariantIsTheWriteWithOneRecordPerRow() {
        WriteOptions auto = TestConfigs.config("queueLimit", "7").forAutoStream("s");
        WriteOptions asParsed = read("queueLimit", "7", "aggregation", "kpl", "AggregationEnabled", "false",
            "RecordDistributionStrategyDefault", "AUTO");
        assertEquals(asParsed.producer(), auto.producer());
        assertEquals(asParsed.aggregating(), auto.aggregating());
        assertEquals(asParsed.settings(), auto.settings());
    }

    /** Key order holds between the tasks' aggregates in shards placed by key, and nowhere else. */
    @Test
    public void orderingByKeyIsRefusedWhereNoOneKeepsTheOrder() {
        assertTrue(read("ordering", "key").delivery().inKeyOrder());
        assertFalse(read().delivery().inKeyOrder());
        assertContains(errorOf("ordering", "key", "aggregation", "kpl"), "'ordering=key' needs aggregation=executor");
        assertContains(errorOf("ordering", "key", "AggregationEnabled", "false"), "'ordering=key' needs aggregation=executor");
        assertContains(assertThrows(IllegalArgumentException.class,
            () -> TestConfigs.config("ordering", "key").forAutoStream("s")).getMessage(),
            "Stream 's' places records itself", "'ordering=key' cannot be used with it");
    }

    /**
     * The tasks' aggregates need no shard prediction from the daemon (its per-shard work at wide streams);
     * a RateLimit the user gives needs it for the KPL's per-shard limiter, and then one aggregate stays
     * one Kinesis record.
     */
    @Test
    public void theDaemonPredictsShardsForTheTasksAggregatesOnlyWhenRateLimitIsGiven() {
        assertFalse(producer().producerConfiguration().isAggregationEnabled());
        KinesisProducerConfiguration limited = producer("RateLimit", "80").producerConfiguration();
        assertTrue(limited.isAggregationEnabled());
        assertEquals(1L, limited.getAggregationMaxCount());
        assertEquals(80L, limited.getRateLimit());
    }

    /** The registry's header goes first and describes an Avro row; its options alone would do nothing. */
    @Test
    public void aSchemaRegistryNeedsAvroRowsWithNothingBeforeTheHeader() {
        WriteOptions.Registry registry = read("format", "avro", "schemaRegistryName", "r", "schemaCompression", "zlib")
            .registry();
        assertTrue(registry.used());
        assertEquals(SchemaCompression.ZLIB, registry.schemaCompression());
        assertEquals(SchemaCompatibility.BACKWARD, registry.schemaCompatibility());
        assertFalse(read().registry().used());
        assertContains(errorOf("schemaRegistryName", "r"), "Option 'schemaRegistryName' needs format=avro",
            "format=raw writes the data column as it is");
        assertContains(errorOf("format", "json", "schemaRegistryName", "r"), "needs format=avro");
        assertContains(errorOf("format", "avro", "schemaRegistryName", "r", "recordId", "prefix"),
            "'schemaRegistryName' cannot be used with recordId=prefix");
        assertContains(errorOf("format", "avro", "schemaName", "s"),
            "Option 'schemaName' needs the option 'schemaRegistryName' (spark.kpl.schemaRegistryName)");
        assertContains(errorOf("format", "avro", "schemaRegistryName", "r", "schemaCompatibility", "full"),
            "'schemaCompatibility' is the mode of a schema the sink creates: it needs schemaAutoRegistration=true");
        assertEquals(SchemaCompatibility.FULL, read("format", "avro", "schemaRegistryName", "r",
            "schemaAutoRegistration", "true", "schemaCompatibility", "full").registry().schemaCompatibility());
    }

    @Test
    public void theDaemonIsToldHowTheStreamPlacesRecordsUnlessTheUserSaid() {
        assertEquals(RecordDistributionStrategyDefault.USER_PARTITION_KEY,
            producer().producerConfiguration().getRecordDistributionStrategyDefault());
        assertEquals(RecordDistributionStrategyDefault.AUTO, TestConfigs.config().forAutoStream("s")
            .producer().producerConfiguration().getRecordDistributionStrategyDefault());
        KinesisProducerConfiguration autoStreams = TestConfigs.config().producerForAutoStreams().producerConfiguration();
        assertEquals(RecordDistributionStrategyDefault.AUTO, autoStreams.getRecordDistributionStrategyDefault());
        assertFalse("rows naming an AUTO stream go one per Kinesis record", autoStreams.isAggregationEnabled());
        assertNull("rows go as the user said", TestConfigs.config("RecordDistributionStrategyDefault",
            "USER_PARTITION_KEY").producerForAutoStreams());
        assertEquals(RecordDistributionStrategyDefault.AUTO, producer("RecordDistributionStrategyDefault", "AUTO")
            .producerConfiguration().getRecordDistributionStrategyDefault());
        assertContains(errorOf("RecordDistributionStrategyDefault", "KEYS"), "KPL property 'RecordDistributionStrategyDefault'");
    }

    /**
     * The KPL holds what a task hands it at commit for RecordMaxBufferedTime (its flush: 80 ms), which
     * every streaming micro-batch waited out; the tasks' own age bound for open aggregates stays.
     */
    @Test
    public void theTasksAggregatesLeaveTheKplSoonUnlessTheUserSaidOtherwise() {
        assertEquals(KplDefaults.EXECUTOR_AGGREGATES_BUFFERED_MS, producer().producerConfiguration().getRecordMaxBufferedTime());
        assertEquals("the tasks seal open aggregates by the user's value", 100, producer().recordMaxBufferedTimeMs());
        assertEquals(250, producer("RecordMaxBufferedTime", "250").producerConfiguration().getRecordMaxBufferedTime());
        assertEquals(100, producer("aggregation", "kpl").producerConfiguration().getRecordMaxBufferedTime());
    }

    /**
     * The KPL uploads its metrics to CloudWatch unless told otherwise (detailed, per shard), which needs a
     * permission the documented policy does not grant: off unless the user asks, in any case.
     */
    @Test
    public void theKplsCloudWatchMetricsAreOffUnlessTheUserAsks() {
        assertEquals("none", producer().producerConfiguration().getMetricsLevel());
        assertEquals("detailed", producer("metricslevel", "detailed").producerConfiguration().getMetricsLevel());
        assertEquals("summary", producer("MetricsLevel", "summary").producerConfiguration().getMetricsLevel());
    }

    @Test
    public void badKplValuesNameThePropertyAndTheAllowedRange() {
        assertContains(errorOf("RecordMaxBufferedTime", "-5"), "KPL property 'RecordMaxBufferedTime'",
            "must be between 0 and 9223372036854775807");
        assertContains(errorOf("MetricsLevel", "loud"), "KPL property 'MetricsLevel'", "none|summary|detailed");
        assertContains(errorOf("RecordTtl", "10"), "KPL property 'RecordTtl'", "between 100 and");
        assertContains(errorOf("MaxConnections", "many"), "KPL property 'MaxConnections'", "expected a whole number");
        assertContains(errorOf("aggregationenabled", "perhaps"), "KPL property 'AggregationEnabled'", "true or false");
    }

    /** The KPL (1.0.9 and 1.1.1) puts its configuration on the daemon's command line: a password there is readable by every user. */
    @Test
    public void aProxyPasswordIsRefusedSayingWhy() {
        assertContains(errorOf("ProxyHost", "127.0.0.1", "proxypassword", "secret"), "KPL property 'ProxyPassword' is refused",
            "command line", "every user of the host can read it");
    }

    @Test
    public void executorAggregationGetsAProducerOfItsOwnThatSendsEachAggregateAsItIs() {
        WriteOptions perRecord = read("aggregation", "kpl");
        WriteOptions executor = read();

        assertEquals("false", executor.producer().kplProperties().get("AggregationEnabled"));
        assertFalse(perRecord.producer().kplProperties().containsKey("AggregationEnabled"));
        assertFalse(perRecord.producer().equals(executor.producer()));
        assertEquals("two payload units of 25 KiB with the aggregate's 1-byte key", 51_199,
            executor.aggregating().aggregateMaxBytes());
        assertEquals(20_000, read("aggregation", "executor", "AggregationMaxSize", "20000").aggregating().aggregateMaxBytes());
        assertEquals("every aggregate is one record, with its 1-byte key", 99,
            read("maxRecordBytes", "100").aggregating().aggregateMaxBytes());
    }

    @Test
    public void executorAggregationRefusesTheKplAggregationSettingsItOwns() {
        assertContains(errorOf("aggregation", "executor", "AggregationMaxCount", "10"),
            "KPL property 'AggregationMaxCount' cannot be set with aggregation=executor", "AggregationMaxSize");
        assertContains(errorOf("aggregation", "executor", "aggregationenabled", "false"),
            "KPL property 'AggregationEnabled' cannot be set with aggregation=executor");
        assertContains(errorOf("aggregation", "executor", "AggregationMaxSize", "1048576"),
            "'AggregationMaxSize' (1048576) is over what one Kinesis record holds", "at most 1048575",
            "maxRecordBytes=1048576 less the aggregate's partition key 'a'");
        assertContains(errorOf("aggregation", "daemon"), "'aggregation' (spark.kpl.aggregation)", "executor, kpl");
    }

    /** Kinesis refuses a PutRecords call over 10 MiB whole, and the KPL would retry it until RecordTtl. */
    @Test
    public void aCollectionLargerThanOnePutRecordsCallIsRefused() {
        for (String aggregation : new String[] {"executor", "kpl"}) {
            assertContains(errorOf("aggregation", aggregation, "CollectionMaxSize", "10485761"),
                "KPL property 'CollectionMaxSize' (10485761)", "10485760 bytes", "PutRecords");
        }
        assertEquals(10L << 20, producer("CollectionMaxSize", "10485760").kplConfiguration().getCollectionMaxSize());
    }

    /** A user who switched the KPL's aggregation off has consumers that cannot de-aggregate: never aggregate for them. */
    @Test
    public void theKplsOwnAggregationSettingsWithoutTheOptionMeanThePerRecordPath() {
        WriteOptions unaggregated = read("AggregationEnabled", "false");
        WriteOptions counted = read("AggregationMaxCount", "10");

        assertFalse(unaggregated.aggregating().inExecutor());
        assertFalse(unaggregated.aggregating().aggregatesRecords());
        assertEquals("false", unaggregated.producer().kplProperties().get("AggregationEnabled"));
        assertEquals("spark.kpl.aggregation=kpl", "kpl", unaggregated.settings().get("spark.kpl.aggregation"));
        assertFalse(counted.aggregating().inExecutor());
        assertTrue(read().aggregating().inExecutor());
    }

    @Test
    public void credentialMistakesAreErrorsNamingTheOption() {
        assertContains(errorOf("awsProfile", "no-such-profile-here"), "'awsProfile' (spark.kpl.awsProfile)",
            "no profile 'no-such-profile-here'");
        assertContains(errorOf("awsAccessKeyId", "A"), "only 'awsAccessKeyId' is set");
        assertContains(errorOf("awsSessionToken", "T"), "'awsSessionToken' needs awsAccessKeyId");
        assertContains(errorOf("awsRoleSessionName", "x"), "'awsRoleSessionName' would be ignored");
        assertContains(errorOf("awsRoleArn", "arn:aws:iam::1:role/r", "awsStsEndpoint", "not a uri"),
            "'awsStsEndpoint' (spark.kpl.awsStsEndpoint)");
    }

    @Test
    public void secretsAreMaskedWhereTheConfigIsShown() {
        String shown = read("awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t-value").toString();
        assertFalse(shown, shown.contains("s3cr3t-value"));
        assertFalse(shown, shown.contains("AKIDEXAMPLE"));
        assertContains(shown, "awsSecretAccessKey=***");
    }

    @Test
    public void choicesAndBooleansNameTheOptionAndTheirValues() {
        assertContains(errorOf("recordId", "uuid"), "'recordId' (spark.kpl.recordId): expected one of none, prefix");
        assertContains(errorOf("allowDuplicates", "yes"), "'allowDuplicates' (spark.kpl.allowDuplicates): expected "
            + "true or false");
    }

    @Test
    public void choicesAreParsedOnceInAnyCaseWithTheirDefaults() {
        WriteOptions defaults = read();
        assertEquals(NullData.FAIL, defaults.shape().nullData());
        assertEquals(RecordId.NONE, defaults.shape().recordId());
        assertEquals(Format.RAW, defaults.shape().format());
        assertEquals(Aggregation.EXECUTOR, defaults.aggregating().aggregation());
        assertEquals("unset, the rows' columns decide", null, defaults.target().partitioner());

        WriteOptions given = read("nullData", " SKIP ", "recordId", "Prefix", "partitioner", "fixed",
            "aggregation", "KPL");
        assertEquals(NullData.SKIP, given.shape().nullData());
        assertEquals(RecordId.PREFIX, given.shape().recordId());
        assertEquals(Partitioner.FIXED, given.target().partitioner());
        assertEquals(Aggregation.KPL, given.aggregating().aggregation());
        assertEquals(Format.AVRO, read("format", "avro").shape().format());
    }

    @Test
    public void everyChoiceOptionListsItsValuesAsWritten() {
        assertEquals(java.util.List.of("random", "fixed", "column"), SinkOption.PARTITIONER.choices());
        assertEquals(java.util.List.of("raw", "json", "avro"), SinkOption.FORMAT.choices());
        assertTrue(SinkOption.STREAM_NAME.choices().isEmpty());
        assertContains(errorOf("format", "xml"), "'format' (spark.kpl.format): expected one of raw, json, avro, got 'xml'");
        assertContains(errorOf("partitioner", "hash"), "expected one of random, fixed, column, got 'hash'");
    }

    @Test
    public void optionsThatWouldBeIgnoredAreErrors() {
        assertContains(errorOf("format", "json", "nullData", "skip"), "'nullData' would be ignored");
        assertContains(errorOf("deadLetterPath", "/tmp/x"), "'deadLetterPath' needs failOnError=false");
    }

    @Test
    public void aQuerysCheckpointIsAnOptionNeverAConfigKey() {
        String message = assertThrows(IllegalArgumentException.class, () -> WriteConfig.read(
            Map.of("spark.kpl.checkpointLocation", "/tmp/c"), Map.of("Region", "us-east-1"))).getMessage();
        assertContains(message, "'spark.kpl.checkpointLocation' is not taken", "option only");
        assertEquals("/tmp/c", read("checkpointLocation", "/tmp/c").settings().get("spark.kpl.checkpointLocation"));
    }

    @Test
    public void producerSettingsReadBackWhatTheKplConfigurationHoldsSecretsMasked() {
        ProducerSpec spec = WriteConfig.read(Map.of("spark.kpl.queueLimit", "7", "spark.kpl.RateLimit", "90"),
            Map.of("Region", "us-east-1", "awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t-value"))
            .options().producer();
        Map<String, String> settings = spec.settings(spec.kplConfiguration());
        assertEquals("7", settings.get("spark.kpl.queueLimit"));
        assertEquals("90", settings.get("spark.kpl.RateLimit"));
        assertEquals("6000", settings.get("spark.kpl.RequestTimeout"));  // the KPL's default, read back
        assertEquals("1048576", settings.get("spark.kpl.MaxUserRecordSize"));  // set by the sink
        assertEquals("***", settings.get("spark.kpl.awsSecretAccessKey"));
        assertFalse(settings.toString(), settings.toString().contains("s3cr3t"));
    }

    @Test
    public void aMistypedNameSuggestsTheClosestKnownOne() {
        assertContains(errorOf("stramName", "clicks"), "Unknown option 'stramName'", "Did you mean 'streamName'?");
        // Python's keyword style, and a KPL property one letter short
        assertContains(errorOf("fail_on_error", "false"), "Did you mean 'failOnError'?");
        assertContains(errorOf("RecordMaxBufferTime", "100"), "Did you mean 'RecordMaxBufferedTime'?");
        String key = assertThrows(IllegalArgumentException.class, () -> WriteConfig.read(
            Map.of("spark.kpl.queuelimt", "7"), Map.of("Region", "us-east-1"))).getMessage();
        assertContains(key, "Unknown Spark config key 'spark.kpl.queuelimt'", "Did you mean 'spark.kpl.queueLimit'?");
    }

    @Test
    public void aNameCloseToNoneGetsNoSuggestionButTheList() {
        String message = errorOf("colour", "red");
        assertFalse(message, message.contains("Did you mean"));
        assertContains(message, "Unknown option 'colour'", "streamName", "RecordMaxBufferedTime");
    }

    @Test
    public void anOptionOnlyIsNeverSuggestedAsAConfigKey() {
        String key = assertThrows(IllegalArgumentException.class, () -> WriteConfig.read(
            Map.of("spark.kpl.checkpointLocaton", "/tmp/c"), Map.of("Region", "us-east-1"))).getMessage();
        assertFalse(key, key.contains("Did you mean"));
        assertContains(errorOf("checkpointLocaton", "/tmp/c"), "Did you mean 'checkpointLocation'?");
    }

    @Test
    public void aPathIsTheStreamsName() {
        assertEquals("clicks", read("path", "clicks").target().streamName());
        assertEquals("clicks", read("path", "clicks", "streamName", "clicks").target().streamName());
        // the write's own path wins over the session's config key, as its options do
        WriteOptions overConfig = WriteConfig.read(Map.of("spark.kpl.streamName", "other"),
            Map.of("Region", "us-east-1", "path", "clicks")).options();
        assertEquals("clicks", overConfig.target().streamName());
        assertEquals("clicks", overConfig.settings().get("spark.kpl.streamName"));
    }

    @Test
    public void aPathAndAnotherStreamNameAreRefusedNamingBoth() {
        assertContains(errorOf("path", "clicks", "STREAMNAME", "views"), "two streams", "'clicks' as the path",
            "'views' as the option 'STREAMNAME'");
    }
}
