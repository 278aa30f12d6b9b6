package sparkkpl.config;

import java.net.URI;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.ProfileCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.profiles.ProfileFile;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.StsClientBuilder;
import software.amazon.awssdk.services.sts.auth.StsAssumeRoleCredentialsProvider;

/**
 * The credentials the producer signs with, from the sink's options: static keys, a profile, or
 * the default chain (environment, system properties, profile, web identity, container, instance
 * profile), optionally exchanged for a role's through STS. Whichever it is, the KPL gets this provider
 * and asks it again every CredentialsRefreshDelay, handing what it answers to the daemon: temporary
 * credentials that rotate (an instance profile's, a role's) reach the daemon before they expire.
 */
public final class AwsCredentials {
    private AwsCredentials() {}

    /**
     * Checks that the options make sense together, on the driver.
     *
     * @throws IllegalArgumentException naming the option missing, contradictory, ignored or unknown
     */
    static void validate(WriteConfig config) {
        boolean keyId = config.get(SinkOption.AWS_ACCESS_KEY_ID).isPresent();
        boolean secret = config.get(SinkOption.AWS_SECRET_ACCESS_KEY).isPresent();
        if (keyId != secret) {
            throw new IllegalArgumentException("Options 'awsAccessKeyId' and 'awsSecretAccessKey' go together: "
                + "only '" + (keyId ? "awsAccessKeyId" : "awsSecretAccessKey") + "' is set");
        }
        if (config.get(SinkOption.AWS_SESSION_TOKEN).isPresent() && !keyId) {
            throw new IllegalArgumentException("Option 'awsSessionToken' needs awsAccessKeyId and awsSecretAccessKey");
        }
        Optional<String> profile = config.get(SinkOption.AWS_PROFILE);
        if (profile.isPresent()) {
            if (keyId) {
                throw new IllegalArgumentException("Options 'awsProfile' and 'awsAccessKeyId' contradict each other: "
                    + "give static keys or a profile, not both");
            }
            if (ProfileFile.defaultProfileFile().profile(profile.get()).isEmpty()) {
                throw new IllegalArgumentException("Option 'awsProfile' (" + SinkOption.AWS_PROFILE.confKey()
                    + "): no profile '" + profile.get() + "' in the AWS credentials or config file (~/.aws/credentials, "
                    + "~/.aws/config, or the files AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name)");
            }
        }
        if (config.get(SinkOption.AWS_ROLE_ARN).isEmpty()) {
            for (SinkOption roleOption : new SinkOption[] {SinkOption.AWS_ROLE_SESSION_NAME, SinkOption.AWS_STS_ENDPOINT}) {
                if (config.hasValue(roleOption)) {
                    throw new IllegalArgumentException("Option '" + roleOption.optionName() + "' would be ignored: it "
                        + "is for assuming the role awsRoleArn names, and none is set");
                }
            }
        }
        config.get(SinkOption.AWS_STS_ENDPOINT).ifPresent(endpoint -> {
            try {
                URI uri = URI.create(endpoint);
                if (uri.getScheme() == null || uri.getHost() == null) {
                    throw new IllegalArgumentException("not an absolute URI");
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Invalid value for option 'awsStsEndpoint' ("
                    + SinkOption.AWS_STS_ENDPOINT.confKey() + "): expected a URI such as https://sts.eu-west-1.amazonaws.com, "
                    + "got '" + endpoint + "'", e);
            }
        });
    }

    /** The provider for the producer and the sink's own calls to Kinesis. */
    public static AwsCredentialsProvider provider(WriteConfig config) {
        Optional<String> roleArn = config.get(SinkOption.AWS_ROLE_ARN);
        if (roleArn.isEmpty()) {
            return baseProvider(config);
        }
        StsClientBuilder sts = StsClient.builder().credentialsProvider(baseProvider(config));
        Optional.ofNullable(config.kplProperties().get("Region")).map(Region::of).ifPresent(sts::region);
        config.get(SinkOption.AWS_STS_ENDPOINT).map(URI::create).ifPresent(sts::endpointOverride);
        String sessionName = config.get(SinkOption.AWS_ROLE_SESSION_NAME).orElseThrow();
        return StsAssumeRoleCredentialsProvider.builder()
            .stsClient(sts.build())
            .refreshRequest(request -> request.roleArn(roleArn.get()).roleSessionName(sessionName))
            .build();
    }

    /**
     * The provider, once it has given credentials. The KPL resolves them on a thread of its own, where
     * a failure (STS refusing the role, say) is only printed and the records time out without a word
     * on why; resolving here first fails the task with the reason instead.
     *
     * @throws Unavailable naming the options and the provider's error
     */
    public static AwsCredentialsProvider resolvedOnce(AwsCredentialsProvider provider, WriteConfig config) {
        try {
            provider.resolveCredentials();
            return provider;
        } catch (RuntimeException e) {
            throw new Unavailable("No AWS credentials from " + describe(config) + ": " + e.getMessage(), e);
        }
    }

    /** No credentials from what the write's options name. */
    public static final class Unavailable extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private static String describe(WriteConfig config) {
        String base = config.get(SinkOption.AWS_ACCESS_KEY_ID).isPresent() ? "the static keys (awsAccessKeyId)"
            : config.get(SinkOption.AWS_PROFILE).map(p -> "profile '" + p + "' (awsProfile)")
                .orElse("the default credentials chain");
        return config.get(SinkOption.AWS_ROLE_ARN)
            .map(role -> "role '" + role + "' (awsRoleArn) assumed through STS at "
                + config.get(SinkOption.AWS_STS_ENDPOINT).orElse("the Region's STS endpoint") + " with " + base)
            .orElse(base);
    }

    private static AwsCredentialsProvider baseProvider(WriteConfig config) {
        Optional<String> keyId = config.get(SinkOption.AWS_ACCESS_KEY_ID);
        if (keyId.isPresent()) {
            String secret = config.get(SinkOption.AWS_SECRET_ACCESS_KEY).orElseThrow();
            Optional<String> token = config.get(SinkOption.AWS_SESSION_TOKEN);
            return StaticCredentialsProvider.create(token.isPresent()
                ? AwsSessionCredentials.create(keyId.get(), secret, token.get())
                : AwsBasicCredentials.create(keyId.get(), secret));
        }
        return config.get(SinkOption.AWS_PROFILE)
            .<AwsCredentialsProvider>map(ProfileCredentialsProvider::create)
            .orElseGet(() -> DefaultCredentialsProvider.builder().build());
    }
}
