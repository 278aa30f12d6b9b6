package sparkkpl.aws;

import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.StsClientBuilder;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;
import sparkkpl.config.CredentialSource;

/**
 * The credentials the producer and the sink's own Kinesis calls sign with, made from a write's
 * {@link CredentialSource}. Whichever it is, the KPL gets this provider and asks it again every
 * CredentialsRefreshDelay, handing what it answers to the daemon: temporary credentials that rotate
 * (an instance profile's, a role's) reach the daemon before they expire.
 */
public final class Credentials {
    private Credentials() {}

    /**
     * The provider, once it has given credentials. The KPL resolves them on a thread of its own, where
     * a failure (STS refusing the role, say) is only printed and the records time out without a word
     * on why; resolving here first fails the task with the reason instead.
     *
     * @param region the Region whose STS assumes a role, when no STS endpoint is given
     * @throws Unavailable naming the options and the provider's error
     */
    public static AwsCredentialsProvider checkedProvider(CredentialSource source, String region) {
        AwsCredentialsProvider provider = provider(source, region);
        try {
            provider.resolveCredentials();
            return provider;
        } catch (RuntimeException e) {
            throw new Unavailable("No AWS credentials from " + source.describe() + ": " + e.getMessage(), e);
        }
    }

    /** No credentials from what the write's options name. */
    public static final class Unavailable extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static AwsCredentialsProvider provider(CredentialSource source, String region) {
        if (source.roleArn() == null) {
            return baseProvider(source);
        }
        StsClientBuilder sts = StsClient.builder().credentialsProvider(baseProvider(source)).region(Region.of(region));
        if (source.stsEndpoint() != null) {
            sts.endpointOverride(URI.create(source.stsEndpoint()));
        }
        return StsAssumeRoleCredentialsProvider.builder()
            .stsClient(sts.build())
            .refreshRequest(request -> request.roleArn(source.roleArn()).roleSessionName(source.roleSessionName()))
            .build();
    }

    private static AwsCredentialsProvider baseProvider(CredentialSource source) {
        if (source.accessKeyId() != null) {
            return StaticCredentialsProvider.create(source.sessionToken() != null
                ? AwsSessionCredentials.create(source.accessKeyId(), source.secretAccessKey(), source.sessionToken())
                : AwsBasicCredentials.create(source.accessKeyId(), source.secretAccessKey()));
        }
        return source.profile() != null ? ProfileCredentialsProvider.create(source.profile())
            : DefaultCredentialsProvider.builder().build();
    }
}
