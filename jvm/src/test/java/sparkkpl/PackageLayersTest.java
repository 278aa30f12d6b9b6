package sparkkpl;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.Assert.assertEquals;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.Test;

/**
 * The sink's packages depend downwards only, in the one order below, which docs/architecture.md states
 * too: a package may use those before it in {@link #BOTTOM_TO_TOP}, never one after it, and no two
 * packages depend on each other through any path.
 */
public class PackageLayersTest {
    /** Every package under sparkkpl, from the bottom up. */
    static final List<String> BOTTOM_TO_TOP = List.of(
        "util", "kinesis", "failures", "natives", "streaming", "config", "aws", "records", "controlplane",
        "producer", "aggregation", "metrics", "spark", "tools");

    /** The sink's own classes, without its tests. */
    static final JavaClasses MAIN = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("sparkkpl");

    @Test
    public void everyPackageHasItsPlaceInTheOrder() {
        Set<String> packages = MAIN.stream().map(JavaClass::getPackageName)
            .map(name -> name.substring("sparkkpl.".length()).split("\\.")[0]).collect(Collectors.toCollection(TreeSet::new));

        assertEquals(new TreeSet<>(BOTTOM_TO_TOP), packages);
    }

    @Test
    public void noPackagesDependOnEachOther() {
        slices().matching("sparkkpl.(*)..").should().beFreeOfCycles().check(MAIN);
    }

    @Test
    public void noDependencyRunsUp() {
        List<String> upwards = new ArrayList<>();
        for (int i = 0; i < BOTTOM_TO_TOP.size() - 1; i++) {
            String[] above = BOTTOM_TO_TOP.subList(i + 1, BOTTOM_TO_TOP.size()).stream()
                .map(name -> "sparkkpl." + name + "..").toArray(String[]::new);
            ArchRule rule = noClasses().that().resideInAPackage("sparkkpl." + BOTTOM_TO_TOP.get(i) + "..")
                .should().dependOnClassesThat().resideInAnyPackage(above);
            upwards.addAll(rule.evaluate(MAIN).getFailureReport().getDetails());
        }

        assertEquals(List.of(), upwards);
    }

    /** The line "Bottom to top: `util`, `kinesis`, ..." of docs/architecture.md. */
    @Test
    public void theArchitectureDocStatesTheSameOrder() throws IOException {
        String doc = Files.readString(Paths.get("docs/architecture.md"), StandardCharsets.UTF_8);
        Matcher line = Pattern.compile("(?m)^Bottom to top: (.*)$").matcher(doc);
        List<String> stated = new ArrayList<>();
        if (line.find()) {
            Matcher name = Pattern.compile("`(\\w+)`").matcher(line.group(1));
            while (name.find()) {
                stated.add(name.group(1));
            }
        }

        assertEquals(BOTTOM_TO_TOP, stated);
    }
}
