package sparkkpl.spark;

import static org.junit.Assert.assertNotSame;
import static org.junit.Assert.assertSame;

import java.util.Map;
import org.junit.Test;
import sparkkpl.config.WriteConfig;

public class ReportedResolutionsTest {
    private static final Map<String, String> CONF = Map.of("spark.kpl.queueLimit", "7", "spark.app.name", "a");

    private static Map<String, String> options(String resultKey) {
        return Map.of("Region", "us-east-1", "streamName", "s", "sparkkpl.resultKey", resultKey);
    }

    @Test
    public void aWriteRunsWithTheResolutionItsSettingsReportMadeFromTheSameInputs() {
        WriteConfig reported = ReportedResolutions.read(CONF, options("same"));
        Map<String, String> lowerCased = Map.of("region", "us-east-1", "streamname", "s", "sparkkpl.resultkey", "same");
        assertSame(reported, ReportedResolutions.take(Map.of("spark.kpl.queueLimit", "7"), lowerCased));
        assertNotSame("taken once", reported, ReportedResolutions.take(CONF, options("same")));
    }

    @Test
    public void aWriteWhoseInputsChangedSinceTheReportIsResolvedAgain() {
        WriteConfig reported = ReportedResolutions.read(CONF, options("changed"));
        assertNotSame(reported, ReportedResolutions.take(Map.of("spark.kpl.queueLimit", "8"), options("changed")));
    }
}
