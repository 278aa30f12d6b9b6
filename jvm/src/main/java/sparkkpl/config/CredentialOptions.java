package sparkkpl.config;

import java.net.URI;
import java.util.EnumSet;
import java.util.Set;
import software.amazon.awssdk.profiles.ProfileFile;

/**
 * The credential options of a write, checked together on the driver into a {@link CredentialSource}:
 * static keys, a profile, or the default chain (environment, system properties, profile, web identity,
 * container, instance profile), optionally exchanged for a role's through STS.
 */
final class CredentialOptions {
    /** The options it reads. */
    static final Set<SinkOption> OPTIONS = EnumSet.of(SinkOption.AWS_ACCESS_KEY_ID, SinkOption.AWS_SECRET_ACCESS_KEY,
        SinkOption.AWS_SESSION_TOKEN, SinkOption.AWS_PROFILE, SinkOption.AWS_ROLE_ARN, SinkOption.AWS_ROLE_SESSION_NAME,
        SinkOption.AWS_STS_ENDPOINT);

    private CredentialOptions() {}

    /**
     * @throws IllegalArgumentException naming the option missing, contradictory, ignored or unknown
     */
    static CredentialSource source(GivenOptions config) {
        String keyId = config.get(SinkOption.AWS_ACCESS_KEY_ID);
        String secret = config.get(SinkOption.AWS_SECRET_ACCESS_KEY);
        if ((keyId == null) != (secret == null)) {
            throw new IllegalArgumentException("Options 'awsAccessKeyId' and 'awsSecretAccessKey' go together: "
                + "only '" + (keyId != null ? "awsAccessKeyId" : "awsSecretAccessKey") + "' is set");
        }
        String token = config.get(SinkOption.AWS_SESSION_TOKEN);
        if (token != null && keyId == null) {
            throw new IllegalArgumentException("Option 'awsSessionToken' needs awsAccessKeyId and awsSecretAccessKey");
        }
        String profile = config.get(SinkOption.AWS_PROFILE);
        if (profile != null) {
            if (keyId != null) {
                throw new IllegalArgumentException("Options 'awsProfile' and 'awsAccessKeyId' contradict each other: "
                    + "give static keys or a profile, not both");
            }
            if (ProfileFile.defaultProfileFile().profile(profile).isEmpty()) {
                throw new IllegalArgumentException("Option 'awsProfile' (" + SinkOption.AWS_PROFILE.confKey()
                    + "): no profile '" + profile + "' in the AWS credentials or config file (~/.aws/credentials, "
                    + "~/.aws/config, or the files AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name)");
            }
        }
        String roleArn = config.get(SinkOption.AWS_ROLE_ARN);
        // awsStsEndpoint is also where stream ARNs (option or column) ask for the caller's account
        if (roleArn == null && config.given(SinkOption.AWS_ROLE_SESSION_NAME)) {
            throw new IllegalArgumentException("Option '" + SinkOption.AWS_ROLE_SESSION_NAME.optionName() + "' would be "
                + "ignored: it is for assuming the role awsRoleArn names, and none is set");
        }
        String stsEndpoint = config.get(SinkOption.AWS_STS_ENDPOINT);
        if (stsEndpoint != null) {
            checkAbsoluteUri(stsEndpoint);
        }
        return new CredentialSource(keyId, secret, token, profile, roleArn,
            config.get(SinkOption.AWS_ROLE_SESSION_NAME), stsEndpoint);
    }

    private static void checkAbsoluteUri(String endpoint) {
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
    }
}
