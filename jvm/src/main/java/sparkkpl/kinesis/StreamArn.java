package sparkkpl.kinesis;

import java.io.Serializable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Kinesis stream's ARN, {@code arn:PARTITION:kinesis:REGION:ACCOUNT:stream/NAME}, in any partition
 * ({@code aws}, {@code aws-cn}, {@code aws-us-gov}, ...): the stream's name, region and account.
 */
public record StreamArn(String partition, String region, String account, String name) implements Serializable {
    /** What a stream ARN looks like, for errors. */
    public static final String FORM = "arn:aws:kinesis:REGION:ACCOUNT:stream/NAME (ACCOUNT: 12 digits)";

    /** Why only credentials of a stream's own account can write it, for the errors that refuse others. */
    public static final String CROSS_ACCOUNT_REASON = "the KPL addresses streams by name only, which Kinesis "
        + "looks up in the caller's account, so only credentials of the stream's account can write it";

    private static final Pattern ARN =
        Pattern.compile("arn:(aws[a-z-]*):kinesis:([a-z0-9-]+):(\\d{12}):stream/([A-Za-z0-9_.-]{1,128})");
    /** A role's ARN, as awsRoleArn takes it: its account is the fifth field. */
    private static final Pattern ROLE_ARN = Pattern.compile("arn:aws[a-z-]*:iam::(\\d{12}):role/.+");

    /**
     * @throws IllegalArgumentException saying the expected form and what was given
     */
    public static StreamArn parse(String text) {
        Matcher match = ARN.matcher(text);
        if (!match.matches()) {
            throw new IllegalArgumentException("expected a stream ARN " + FORM + ", got '" + text + "'");
        }
        return new StreamArn(match.group(1), match.group(2), match.group(3), match.group(4));
    }

    /** The account of a role ARN ({@code arn:aws:iam::ACCOUNT:role/NAME}); null if it is not one. */
    public static String roleAccount(String roleArn) {
        Matcher match = ROLE_ARN.matcher(roleArn);
        return match.matches() ? match.group(1) : null;
    }

    /** The ARN of the stream {@code stream} in this one's partition, region and account. */
    public String sibling(String stream) {
        return new StreamArn(partition, region, account, stream).toString();
    }

    @Override
    public String toString() {
        return "arn:" + partition + ":kinesis:" + region + ":" + account + ":stream/" + name;
    }
}
