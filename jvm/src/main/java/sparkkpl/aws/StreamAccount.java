package sparkkpl.aws;

import java.net.URI;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sts.StsClient;
import software.amazon.awssdk.services.sts.StsClientBuilder;
import sparkkpl.config.CredentialSource;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.StreamArn;

/**
 * The driver's check that a write's credentials belong to the account of its streamArn: the KPL sends
 * stream names, which Kinesis looks up in the caller's own account, so credentials of another account
 * would write a stream of the same name there, or fail on every record. An assumed role's account is
 * its ARN's, checked with the options; other credentials are asked of STS ({@code GetCallerIdentity}).
 */
public final class StreamAccount {
    private StreamAccount() {}

    /**
     * @throws IllegalArgumentException saying why and what to do when the caller is of another account,
     *     or naming STS's error when it cannot tell
     */
    public static void check(ProducerSpec spec) {
        if (spec.streamArn() == null || spec.credentials().roleArn() != null) {
            return;
        }
        StreamArn stream = StreamArn.parse(spec.streamArn());
        String caller = callerAccount(spec.credentials(), stream.region());
        if (!caller.equals(stream.account())) {
            throw new IllegalArgumentException("Option 'streamArn' names a stream of account " + stream.account()
                + ", and " + spec.credentials().describe() + " are of account " + caller + ": "
                + StreamArn.CROSS_ACCOUNT_REASON + ". Set awsRoleArn to a role in account " + stream.account()
                + " that may write the stream");
        }
    }

    /**
     * The account whose streams the write's credentials can write: the streamArn option's (checked by
     * {@link #check}), an assumed role's, or else the caller's as STS tells.
     *
     * @param region the Region whose STS is asked, when no STS endpoint is given
     * @throws IllegalArgumentException naming STS's error when it cannot tell
     */
    public static String writable(ProducerSpec spec, String region) {
        if (spec.streamArn() != null) {
            return StreamArn.parse(spec.streamArn()).account();
        }
        String roleArn = spec.credentials().roleArn();
        String roleAccount = roleArn == null ? null : StreamArn.roleAccount(roleArn);
        return roleAccount != null ? roleAccount : callerAccount(spec.credentials(), region);
    }

    private static String callerAccount(CredentialSource source, String region) {
        StsClientBuilder builder = StsClient.builder().credentialsProvider(Credentials.provider(source, region))
            .region(Region.of(region));
        if (source.stsEndpoint() != null) {
            builder.endpointOverride(URI.create(source.stsEndpoint()));
        }
        try (StsClient sts = builder.build()) {
            return sts.getCallerIdentity().account();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("Stream ARNs: cannot tell the account of " + source.describe()
                + " to check it is the streams' (STS GetCallerIdentity at "
                + (source.stsEndpoint() != null ? source.stsEndpoint() : "the Region's STS") + "): "
                + e.getMessage(), e);
        }
    }
}
