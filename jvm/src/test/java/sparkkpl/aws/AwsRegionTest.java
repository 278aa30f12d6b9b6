package sparkkpl.aws;

import static org.junit.Assert.assertEquals;

import org.junit.Test;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;

public class AwsRegionTest {
    @Test
    public void theKplPropertyWins() {
        System.setProperty("aws.region", "ap-south-2");
        try {
            assertEquals("eu-west-1", AwsRegion.of(new KinesisProducerConfiguration().setRegion("eu-west-1")));
        } finally {
            System.clearProperty("aws.region");
        }
    }

    @Test
    public void withoutItTheSdkDefaultRegionChainAnswers() {
        System.setProperty("aws.region", "ap-south-2");  // the chain's first place
        try {
            assertEquals("ap-south-2", AwsRegion.of(new KinesisProducerConfiguration()));
        } finally {
            System.clearProperty("aws.region");
        }
    }
}
