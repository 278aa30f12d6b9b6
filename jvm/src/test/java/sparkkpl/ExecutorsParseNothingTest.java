package sparkkpl;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.Assert.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import java.util.Set;
import org.junit.Test;

/**
 * A write's options are parsed once, on the driver, by {@code config.WriteConfig} into values
 * ({@code WriteOptions}, {@code ProducerSpec}); what runs in a task receives those values and parses
 * nothing: it never reaches the parser or the option table, nor parses the KPL's property strings
 * (it gets them parsed, as {@code config.KplValues}).
 */
public class ExecutorsParseNothingTest {
    /** Whole packages whose classes run in tasks, or in the executor JVM below them. */
    private static final Set<String> TASK_PACKAGES = Set.of("aggregation", "aws", "controlplane", "failures", "kinesis",
        "metrics", "natives", "producer", "records", "streaming", "util");
    /** The classes of those packages that run on the driver only: its look at the streams, its clients, its registry lookup. */
    private static final Set<String> DRIVER_ONLY = Set.of("controlplane.StreamLook", "controlplane.DriverClients",
        "records.SchemaRegistration");
    /** The classes of the other packages that are shipped to or run in tasks: the plan's values and the writer. */
    private static final Set<String> TASK_CLASSES = Set.of("config.Aggregation", "config.CredentialSource",
        "config.Format", "config.KplValues", "config.NullData", "config.Partitioner", "config.ProducerSpec", "config.RecordId",
        "config.SchemaCompatibility", "config.SchemaCompression",
        "config.WriteOptions", "spark.KplDataWriter", "spark.WritePlan", "spark.KplBatchWriterFactory",
        "spark.KplStreamingWriterFactory", "spark.SinkTaskFailedException");
    /** The parser (WriteConfig and the parts it reads with) and the option table. */
    private static final Set<String> PARSER = Set.of("config.WriteConfig", "config.GivenOptions", "config.OptionRules",
        "config.KplDerivation", "config.AutoStreams", "config.ShownSettings", "config.SinkOption", "config.OptionGroups");
    /** What parses the KPL's property strings into values, on the driver. */
    private static final Set<String> KPL_PROPERTY_PARSING = Set.of("config.KplProperties.parsed");

    @Test
    public void noTaskSideClassReachesTheParserOrReparsesKplProperties() {
        assertTrue("task-side classes found",
            PackageLayersTest.MAIN.stream().filter(RUNS_IN_TASKS).count() > 60);

        noClasses().that(RUNS_IN_TASKS).should(reachTheParser()).check(PackageLayersTest.MAIN);
    }

    /** A class's name without {@code sparkkpl.} and without its nesting: {@code spark.KplDataWriter}. */
    private static String topLevelName(JavaClass javaClass) {
        String name = javaClass.getName().replaceFirst("^sparkkpl\\.", "");
        int nested = name.indexOf('$');
        return nested < 0 ? name : name.substring(0, nested);
    }

    private static final DescribedPredicate<JavaClass> RUNS_IN_TASKS = new DescribedPredicate<>("run in tasks") {
        @Override
        public boolean test(JavaClass javaClass) {
            String name = topLevelName(javaClass);
            String pkg = name.substring(0, name.indexOf('.'));
            return TASK_PACKAGES.contains(pkg) ? !DRIVER_ONLY.contains(name) : TASK_CLASSES.contains(name);
        }
    };

    /** Depend on the parser, or call what parses the KPL's property strings. */
    private static ArchCondition<JavaClass> reachTheParser() {
        return new ArchCondition<>("reach the parser or parse KPL property strings") {
            @Override
            public void check(JavaClass javaClass, ConditionEvents events) {
                for (Dependency dependency : javaClass.getDirectDependenciesFromSelf()) {
                    String target = topLevelName(dependency.getTargetClass());
                    if (PARSER.contains(target)) {
                        events.add(SimpleConditionEvent.satisfied(dependency, dependency.getDescription()));
                    }
                }
                for (JavaAccess<?> access : javaClass.getAccessesFromSelf()) {
                    String target = topLevelName(access.getTargetOwner()) + "." + access.getName();
                    if (KPL_PROPERTY_PARSING.contains(target)) {
                        events.add(SimpleConditionEvent.satisfied(access, access.getDescription()));
                    }
                }
            }
        };
    }
}
