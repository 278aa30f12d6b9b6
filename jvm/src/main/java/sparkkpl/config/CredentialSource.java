package sparkkpl.config;

import java.io.Serializable;

/**
 * Where a write's AWS credentials come from, as its options say: static keys, a profile, or the default
 * chain, optionally exchanged for a role's through STS. A value: {@code sparkkpl.aws.Credentials} makes
 * the provider from it on the executor. Never shows its secrets.
 *
 * @param accessKeyId null unless static keys are given (with {@code secretAccessKey})
 * @param sessionToken null unless the static keys are temporary
 * @param profile null unless a profile is named
 * @param roleArn null unless a role is to be assumed
 * @param roleSessionName the session name when assuming {@code roleArn}
 * @param stsEndpoint null for the Region's STS
 */
public record CredentialSource(String accessKeyId, String secretAccessKey, String sessionToken, String profile,
                               String roleArn, String roleSessionName, String stsEndpoint) implements Serializable {

    /** What the credentials come from, by the options that name it, for errors and logs. */
    public String describe() {
        String base = accessKeyId != null ? "the static keys (awsAccessKeyId)"
            : profile != null ? "profile '" + profile + "' (awsProfile)" : "the default credentials chain";
        if (roleArn == null) {
            return base;
        }
        return "role '" + roleArn + "' (awsRoleArn) assumed through STS at "
            + (stsEndpoint != null ? stsEndpoint : "the Region's STS endpoint") + " with " + base;
    }

    @Override
    public String toString() {
        return describe();
    }
}
