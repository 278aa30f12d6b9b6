package sparkkpl.config;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.assertThrows;

import java.util.HashMap;
import java.util.Map;
import org.junit.Test;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;
import software.amazon.kinesis.producer.KinesisProducerConfiguration.RecordDistributionStrategyDefault;

public class WriteConfigTest {
    private static WriteConfig resolve(String... keysAndValues) {
        Map<String, String> options = new HashMap<>();
        options.put("Region", "us-east-1");
        for (int i = 0; i < keysAndValues.length; i += 2) {
            options.put(keysAndValues[i], keysAndValues[i + 1]);
        }
        return WriteConfig.resolve(Map.of(), options);
    }

    private static String errorOf(String... keysAndValues) {
        return assertThrows(IllegalArgumentException.class, () -> resolve(keysAndValues)).getMessage();
    }

    private static void assertContains(String message, String... parts) {
        for (String part : parts) {
            assertTrue("'" + message + "' should contain '" + part + "'", message.contains(part));
        }
    }

    @Test
    public void theDaemonIsToldHowTheStreamPlacesRecordsUnlessTheUserSaid() {
        assertEquals(RecordDistributionStrategyDefault.USER_PARTITION_KEY,
            resolve().producerConfiguration().getRecordDistributionStrategyDefault());
        assertEquals(RecordDistributionStrategyDefault.AUTO,
            resolve().withoutAggregationFor("s").producerConfiguration().getRecordDistributionStrategyDefault());
        assertEquals(RecordDistributionStrategyDefault.AUTO, resolve("RecordDistributionStrategyDefault", "AUTO")
            .producerConfiguration().getRecordDistributionStrategyDefault());
        assertContains(errorOf("RecordDistributionStrategyDefault", "KEYS"), "KPL property 'RecordDistributionStrategyDefault'");
    }

    /**
     * The KPL holds what a task hands it at commit for RecordMaxBufferedTime (its flush: 80 ms), which
     * every streaming micro-batch waited out; the tasks' own age bound for open aggregates stays.
     */
    @Test
    public void theTasksAggregatesLeaveTheKplSoonUnlessTheUserSaidOtherwise() {
        assertEquals(WriteConfig.EXECUTOR_AGGREGATES_BUFFERED_MS, resolve().producerConfiguration().getRecordMaxBufferedTime());
        assertEquals(100, resolve().kplConfiguration().getRecordMaxBufferedTime());
        assertEquals(250, resolve("RecordMaxBufferedTime", "250").producerConfiguration().getRecordMaxBufferedTime());
        assertEquals(100, resolve("aggregation", "kpl").producerConfiguration().getRecordMaxBufferedTime());
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
        WriteConfig perRecord = resolve("aggregation", "kpl");
        WriteConfig executor = resolve();

        assertEquals("1", executor.kplProperties().get("AggregationMaxCount"));
        assertEquals("true", executor.kplProperties().get("AggregationEnabled"));
        assertFalse(perRecord.kplProperties().containsKey("AggregationMaxCount"));
        assertFalse(perRecord.producerIdentity().equals(executor.producerIdentity()));
        assertEquals(51_200, executor.aggregateMaxBytes());
        assertEquals(20_000, resolve("aggregation", "executor", "AggregationMaxSize", "20000").aggregateMaxBytes());
        assertEquals("every aggregate is one record, with its 1-byte key", 99,
            resolve("maxRecordBytes", "100").aggregateMaxBytes());
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
        assertEquals(10L << 20, resolve("CollectionMaxSize", "10485760").kplConfiguration().getCollectionMaxSize());
    }

    /** A user who switched the KPL's aggregation off has consumers that cannot de-aggregate: never aggregate for them. */
    @Test
    public void theKplsOwnAggregationSettingsWithoutTheOptionMeanThePerRecordPath() {
        WriteConfig unaggregated = resolve("AggregationEnabled", "false");
        WriteConfig counted = resolve("AggregationMaxCount", "10");

        assertFalse(unaggregated.aggregatesInExecutor());
        assertEquals("false", unaggregated.kplProperties().get("AggregationEnabled"));
        assertEquals("spark.kpl.aggregation=kpl", "kpl", unaggregated.settings().get("spark.kpl.aggregation"));
        assertFalse(counted.aggregatesInExecutor());
        assertTrue(resolve().aggregatesInExecutor());
    }

    @Test
    public void staticKeysMakeAStaticProviderWithASessionToken() {
        WriteConfig config = resolve("awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t",
            "awsSessionToken", "t0ken");
        var provider = sparkkpl.config.AwsCredentials.provider(config);
        assertTrue(provider instanceof StaticCredentialsProvider);
        AwsCredentials credentials = provider.resolveCredentials();
        assertEquals("AKIDEXAMPLE", credentials.accessKeyId());
        assertEquals("t0ken", ((AwsSessionCredentials) credentials).sessionToken());
    }

    @Test
    public void noCredentialOptionsGiveTheJvmDefaultChain() {
        assertTrue(sparkkpl.config.AwsCredentials.provider(resolve()) instanceof DefaultCredentialsProvider);
    }

    @Test
    public void aRoleArnAssumesTheRoleThroughSts() {
        WriteConfig config = resolve("awsRoleArn", "arn:aws:iam::123456789012:role/writer",
            "awsRoleSessionName", "nightly", "awsStsEndpoint", "https://127.0.0.1:1");
        assertTrue(sparkkpl.config.AwsCredentials.provider(config)
            instanceof StsAssumeRoleCredentialsProvider);
    }

    @Test
    public void credentialsThatCannotBeResolvedAreAnErrorNamingTheRouteAndTheReason() {
        WriteConfig config = resolve("awsAccessKeyId", "AKID", "awsSecretAccessKey", "secret",
            "awsRoleArn", "arn:aws:iam::123456789012:role/writer", "awsStsEndpoint", "http://127.0.0.1:1");
        String message = assertThrows(IllegalStateException.class, () -> sparkkpl.config.AwsCredentials.resolvedOnce(
            () -> { throw new IllegalStateException("STS said no"); }, config)).getMessage();
        assertEquals("No AWS credentials from role 'arn:aws:iam::123456789012:role/writer' (awsRoleArn) assumed through "
            + "STS at http://127.0.0.1:1 with the static keys (awsAccessKeyId): STS said no", message);
    }

    @Test
    public void aProfileThatExistsMakesAProfileProvider() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("credentials", "");
        java.nio.file.Files.writeString(file, "[writer]\naws_access_key_id = A\naws_secret_access_key = B\n");
        String previous = System.getProperty("aws.sharedCredentialsFile");
        System.setProperty("aws.sharedCredentialsFile", file.toString());
        try {
            assertTrue(sparkkpl.config.AwsCredentials.provider(resolve("awsProfile", "writer"))
                instanceof ProfileCredentialsProvider);
        } finally {
            if (previous == null) {
                System.clearProperty("aws.sharedCredentialsFile");
            } else {
                System.setProperty("aws.sharedCredentialsFile", previous);
            }
            java.nio.file.Files.delete(file);
        }
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
        String shown = resolve("awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t-value").toString();
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
        WriteConfig defaults = resolve();
        assertEquals(NullData.FAIL, defaults.nullData());
        assertEquals(RecordId.NONE, defaults.recordId());
        assertEquals(Format.RAW, defaults.format());
        assertEquals(Aggregation.EXECUTOR, defaults.aggregation());
        assertFalse("unset, the rows' columns decide", defaults.partitioner().isPresent());

        WriteConfig given = resolve("nullData", " SKIP ", "recordId", "Prefix", "partitioner", "fixed",
            "aggregation", "KPL");
        assertEquals(NullData.SKIP, given.nullData());
        assertEquals(RecordId.PREFIX, given.recordId());
        assertEquals(Partitioner.FIXED, given.partitioner().orElseThrow());
        assertEquals(Aggregation.KPL, given.aggregation());
        assertEquals(Format.AVRO, resolve("format", "avro").format());
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
        String message = assertThrows(IllegalArgumentException.class, () -> WriteConfig.resolve(
            Map.of("spark.kpl.checkpointLocation", "/tmp/c"), Map.of("Region", "us-east-1"))).getMessage();
        assertContains(message, "'spark.kpl.checkpointLocation' is not taken", "option only");
        assertEquals("/tmp/c", resolve("checkpointLocation", "/tmp/c").settings().get("spark.kpl.checkpointLocation"));
    }

    @Test
    public void producerSettingsReadBackWhatTheKplConfigurationHoldsSecretsMasked() {
        WriteConfig config = WriteConfig.resolve(Map.of("spark.kpl.queueLimit", "7", "spark.kpl.RateLimit", "90"),
            Map.of("Region", "us-east-1", "awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t-value"));
        Map<String, String> settings = config.producerSettings(config.kplConfiguration());
        assertEquals("7", settings.get("spark.kpl.queueLimit"));
        assertEquals("90", settings.get("spark.kpl.RateLimit"));
        assertEquals("6000", settings.get("spark.kpl.RequestTimeout"));  // the KPL's default, read back
        assertEquals("1048576", settings.get("spark.kpl.MaxUserRecordSize"));  // set by the sink
        assertEquals("***", settings.get("spark.kpl.awsSecretAccessKey"));
        assertFalse(settings.toString(), settings.toString().contains("s3cr3t"));
    }
}
