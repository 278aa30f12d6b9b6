package sparkkpl.aws;

import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

/**
 * The region the sink and its KPL work in: the KPL property {@code Region} when given, else the AWS
 * SDK's default region chain (aws.region, AWS_REGION, the profile, then the instance's metadata, at
 * AWS_EC2_METADATA_SERVICE_ENDPOINT when set). The KPL's daemon would look at the instance's metadata
 * itself, but its lookup asks only the fixed address 169.254.169.254, whatever that variable says (its
 * AWS SDK follows the variable elsewhere), so the JVM asks and hands the region over.
 */
public final class AwsRegion {
    private AwsRegion() {}

    /**
     * @throws IllegalArgumentException naming the property and the places looked at, when none has a region
     */
    public static String of(KinesisProducerConfiguration kpl) {
        if (!kpl.getRegion().isEmpty()) {
            return kpl.getRegion();
        }
        try {
            return new DefaultAwsRegionProviderChain().getRegion().id();
        } catch (SdkClientException e) {
            throw new IllegalArgumentException("No AWS region: give the KPL property 'Region', or run where the AWS "
                + "SDK's default region chain finds one (aws.region, AWS_REGION, the profile's region, the EC2 "
                + "instance's metadata): " + e.getMessage(), e);
        }
    }
}
