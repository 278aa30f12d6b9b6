package sparkkpl.aws;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.Test;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;
import sparkkpl.config.CredentialSource;
import sparkkpl.config.TestConfigs;

/** The provider a write's credential options make, as the producer and the shard lister get it. */
public class CredentialsTest {
    private static CredentialSource source(String... namesAndValues) {
        return TestConfigs.read(namesAndValues).producer().credentials();
    }

    @Test
    public void staticKeysMakeAStaticProviderWithASessionToken() {
        var provider = Credentials.checkedProvider(source("awsAccessKeyId", "AKIDEXAMPLE", "awsSecretAccessKey", "s3cr3t",
            "awsSessionToken", "t0ken"), "us-east-1");
        assertTrue(provider instanceof StaticCredentialsProvider);
        AwsCredentials credentials = provider.resolveCredentials();
        assertEquals("AKIDEXAMPLE", credentials.accessKeyId());
        assertEquals("t0ken", ((AwsSessionCredentials) credentials).sessionToken());
    }

    @Test
    public void noCredentialOptionsGiveTheJvmDefaultChain() {
        assertTrue(Credentials.provider(source(), "us-east-1") instanceof DefaultCredentialsProvider);
    }

    @Test
    public void aRoleArnAssumesTheRoleThroughSts() {
        assertTrue(Credentials.provider(source("awsRoleArn", "arn:aws:iam::123456789012:role/writer",
            "awsRoleSessionName", "nightly", "awsStsEndpoint", "https://127.0.0.1:1"), "us-east-1")
            instanceof StsAssumeRoleCredentialsProvider);
    }

    @Test
    public void credentialsThatCannotBeResolvedAreAnErrorNamingTheRouteAndTheReason() {
        CredentialSource role = source("awsAccessKeyId", "AKID", "awsSecretAccessKey", "secret",
            "awsRoleArn", "arn:aws:iam::123456789012:role/writer", "awsStsEndpoint", "http://127.0.0.1:1");
        String message = assertThrows(Credentials.Unavailable.class, () -> Credentials.checkedProvider(role, "us-east-1"))
            .getMessage();
        assertTrue(message, message.startsWith("No AWS credentials from role 'arn:aws:iam::123456789012:role/writer' "
            + "(awsRoleArn) assumed through STS at http://127.0.0.1:1 with the static keys (awsAccessKeyId): "));
    }

    @Test
    public void aProfileThatExistsMakesAProfileProvider() throws Exception {
        Path file = Files.createTempFile("credentials", "");
        Files.writeString(file, "[writer]\naws_access_key_id = A\naws_secret_access_key = B\n");
        String previous = System.getProperty("aws.sharedCredentialsFile");
        System.setProperty("aws.sharedCredentialsFile", file.toString());
        try {
            assertTrue(Credentials.provider(source("awsProfile", "writer"), "us-east-1")
                instanceof ProfileCredentialsProvider);
        } finally {
            if (previous == null) {
                System.clearProperty("aws.sharedCredentialsFile");
            } else {
                System.setProperty("aws.sharedCredentialsFile", previous);
            }
            Files.delete(file);
        }
    }
}
