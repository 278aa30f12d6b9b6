package sparkkpl.natives;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Names what a Linux host lacks to start the KPL daemon, from the daemon's ELF headers: its
 * interpreter, its libraries and the symbol versions it needs from them (the glibc version). These
 * are the start failures the KPL reports only as "The child process has been shutdown": glibc too
 * old ({@code GLIBC_2.25 not found}), a missing {@code libuuid.so.1} (exit 127), a musl host such as
 * Alpine (no glibc interpreter, {@code error=2}).
 *
 * <p>Libraries are looked for as the loader does, roughly: {@code LD_LIBRARY_PATH}, the
 * {@code ldconfig} cache, the standard folders. A check that cannot be carried out (a header it
 * cannot read, no {@code ldconfig}) is logged and counts as nothing lacking: this names a failure, it
 * never causes one.
 */
final class HostRequirements {
    /** The JDK's logger, not slf4j: {@code PlaceDaemon} runs this with the jar alone on the classpath. */
    private static final System.Logger LOG = System.getLogger(HostRequirements.class.getName());
    private static final Pattern LDCONFIG_ENTRY = Pattern.compile("^\\s*(\\S+) \\(([^)]*)\\) => (\\S+)$");
    private static final long LDCONFIG_TIMEOUT_SECONDS = 10;
    private static final String USE_GLIBC_IMAGE = "use a glibc-based image (Debian, Ubuntu, Amazon Linux, RHEL)";

    /** The package that provides a library, on Debian/Ubuntu and on RHEL/Amazon Linux. */
    private record Package(String debian, String redHat) {
        static final Package GLIBC = new Package("libc6", "glibc");

        static Package providing(String library) {
            if (library.startsWith("libuuid.so")) {
                return new Package("libuuid1", "libuuid");
            }
            if (library.startsWith("libgcc_s.so")) {
                return new Package("libgcc-s1", "libgcc");
            }
            if (library.startsWith("libstdc++.so")) {
                return new Package("libstdc++6", "libstdc++");
            }
            return isGlibc(library) ? GLIBC : null;
        }

        static boolean isGlibc(String library) {
            return library.matches("(libc|libm|libdl|librt|libpthread)\\.so\\.\\d+|ld-linux.*\\.so\\.\\d+");
        }

        String install() {
            return "install " + debian + " (Debian/Ubuntu) or " + redHat + " (RHEL/Amazon Linux)";
        }
    }

    private final Path root;
    private final List<Path> libraryPath;
    private final Map<String, List<Path>> ldconfigCache;

    /** A host whose file system is under {@code root} ("/" but in tests). */
    HostRequirements(Path root, List<Path> libraryPath, Map<String, List<Path>> ldconfigCache) {
        this.root = root;
        this.libraryPath = libraryPath;
        this.ldconfigCache = ldconfigCache;
    }

    /**
     * What this host lacks to start {@code executable}, one sentence per missing part, each naming
     * what to install; empty when nothing is lacking or when the check could not be carried out.
     */
    static List<String> lacking(Path executable) {
        try {
            ElfDependencies daemon = ElfDependencies.read(executable);
            return onThisHost().lacking(daemon);
        } catch (IOException | RuntimeException unreadable) {
            LOG.log(System.Logger.Level.WARNING, "Could not check what " + executable
                + " needs to run on this host; starting it unchecked", unreadable);
            return List.of();
        }
    }

    private static HostRequirements onThisHost() {
        List<Path> libraryPath = new ArrayList<>();
        String fromEnvironment = System.getenv("LD_LIBRARY_PATH");
        if (fromEnvironment != null) {
            Arrays.stream(fromEnvironment.split(":")).filter(s -> !s.isEmpty()).map(Paths::get)
                .forEach(libraryPath::add);
        }
        return new HostRequirements(Paths.get("/"), libraryPath, ldconfigCache());
    }

    List<String> lacking(ElfDependencies daemon) {
        List<String> lacking = new ArrayList<>();
        if (daemon.interpreter() != null && !Files.exists(root.resolve(daemon.interpreter().substring(1)))) {
            lacking.add(missingInterpreter(daemon.interpreter()));
            return lacking; // without its loader, nothing else about the host matters
        }
        Map<String, List<String>> glibcVersionsLacking = new LinkedHashMap<>();
        for (String library : daemon.needed()) {
            Optional<Path> found = find(library, daemon.machine());
            if (found.isEmpty()) {
                lacking.add(missingLibrary(library));
                continue;
            }
            List<String> missing = versionsLacking(found.get(), daemon.versionsNeeded().getOrDefault(library, List.of()));
            List<String> glibc = missing.stream().filter(HostRequirements::isGlibcVersion).toList();
            if (!glibc.isEmpty()) {
                glibcVersionsLacking.put(library, glibc);
            }
            if (glibc.size() < missing.size()) {
                lacking.add(outdatedLibrary(library, found.get(), missing));
            }
        }
        if (!glibcVersionsLacking.isEmpty()) {
            lacking.add(glibcTooOld(glibcVersionsLacking, daemon.machine()));
        }
        return lacking;
    }

    private String missingInterpreter(String interpreter) {
        List<Path> musl = glob(root.resolve("lib"), "ld-musl-*.so.1");
        if (!musl.isEmpty()) {
            return "this host runs musl libc (" + musl.get(0) + ", as on Alpine), not glibc: the KPL daemon needs "
                + "glibc and its loader " + interpreter + ", so Alpine is not supported; " + USE_GLIBC_IMAGE;
        }
        return "its ELF interpreter (the glibc loader) " + interpreter + " does not exist on this host: "
            + Package.GLIBC.install() + ", or " + USE_GLIBC_IMAGE;
    }

    private static String missingLibrary(String library) {
        Package provider = Package.providing(library);
        return "the shared library " + library + " it needs is not found on this host (searched LD_LIBRARY_PATH, "
            + "the ldconfig cache and the standard library folders): "
            + (provider == null ? "install the package that provides it" : provider.install());
    }

    private static String outdatedLibrary(String library, Path path, List<String> missing) {
        Package provider = Package.providing(library);
        return library + " on this host (" + path + ") lacks the symbol version(s) " + missing + " the daemon needs: "
            + (provider == null ? "update the package that provides it" : "update it (" + provider.install() + ")");
    }

    /** One sentence for every glibc library short of a version: the glibc the daemon needs and the host's. */
    private String glibcTooOld(Map<String, List<String>> lackingByLibrary, int machine) {
        String needed = highestGlibc(lackingByLibrary.values().stream().flatMap(List::stream).toList()).orElseThrow();
        String hostGlibc = find("libc.so.6", machine)
            .map(libc -> highestGlibc(versionsDefined(libc)).map(v -> "glibc " + v + " (" + libc + ")")
                .orElse("a glibc of unknown version (" + libc + ")"))
            .orElse("no libc.so.6");
        return "it needs glibc " + needed + " or newer (" + lackingByLibrary.entrySet().stream()
            .map(e -> e.getKey() + " lacks " + e.getValue()).collect(Collectors.joining(", ")) + "), this host has "
            + hostGlibc + ": use an image whose glibc is " + needed + " or newer";
    }

    /** Of the versions {@code needed} from the library at {@code path}, those it does not define. */
    private static List<String> versionsLacking(Path path, List<String> needed) {
        if (needed.isEmpty()) {
            return List.of();
        }
        List<String> defined = versionsDefined(path);
        return defined.isEmpty() ? List.of() : needed.stream().filter(v -> !defined.contains(v)).toList();
    }

    /** Empty (logged) when the library's versions cannot be read, so that none counts as lacking. */
    private static List<String> versionsDefined(Path library) {
        try {
            return ElfDependencies.read(library).versionsDefined();
        } catch (IOException | RuntimeException unreadable) {
            LOG.log(System.Logger.Level.WARNING, "Could not read the symbol versions " + library
                + " defines; not checking them", unreadable);
            return List.of();
        }
    }

    private static boolean isGlibcVersion(String version) {
        return version.matches("GLIBC_\\d+(\\.\\d+)*");
    }

    /** {@code 2.25} for the highest of {@code GLIBC_2.3.4, GLIBC_2.25, ...}. */
    static Optional<String> highestGlibc(List<String> versions) {
        return versions.stream().filter(HostRequirements::isGlibcVersion)
            .map(v -> v.substring("GLIBC_".length()))
            .max(Comparator.comparing(HostRequirements::versionNumbers, Arrays::compare));
    }

    private static int[] versionNumbers(String version) {
        return Arrays.stream(version.split("\\.")).mapToInt(Integer::parseInt).toArray();
    }

    /** The first file named {@code library} built for {@code machine}, where the loader would look. */
    private Optional<Path> find(String library, int machine) {
        Set<Path> candidates = new LinkedHashSet<>();
        libraryPath.forEach(dir -> candidates.add(dir.resolve(library)));
        candidates.addAll(ldconfigCache.getOrDefault(library, List.of()));
        standardFolders(machine).forEach(dir -> candidates.add(dir.resolve(library)));
        return candidates.stream().filter(candidate -> builtFor(candidate, machine)).findFirst();
    }

    private List<Path> standardFolders(int machine) {
        String multiarch = machine == ElfDependencies.EM_AARCH64 ? "aarch64-linux-gnu" : "x86_64-linux-gnu";
        List<Path> folders = new ArrayList<>();
        for (String base : List.of("lib64", "usr/lib64", "lib", "usr/lib", "usr/local/lib")) {
            folders.add(root.resolve(base).resolve(multiarch));
            folders.add(root.resolve(base));
        }
        return folders;
    }

    /** An existing file for this machine; one whose header cannot be read is taken as fitting. */
    private static boolean builtFor(Path candidate, int machine) {
        if (!Files.isRegularFile(candidate)) {
            return false;
        }
        try {
            return ElfDependencies.read(candidate).machine() == machine;
        } catch (IOException | RuntimeException unreadable) {
            return true;
        }
    }

    /** Library name to paths, from {@code ldconfig -p}; empty (logged) when there is no ldconfig to ask. */
    private static Map<String, List<Path>> ldconfigCache() {
        for (String ldconfig : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig")) {
            if (!Files.isExecutable(Paths.get(ldconfig))) {
                continue;
            }
            try {
                Process process = new ProcessBuilder(ldconfig, "-p").redirectErrorStream(true).start();
                process.getOutputStream().close();
                String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (process.waitFor(LDCONFIG_TIMEOUT_SECONDS, TimeUnit.SECONDS) && process.exitValue() == 0) {
                    return parseLdconfig(output);
                }
                process.destroyForcibly();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, ldconfig + " -p failed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        LOG.log(System.Logger.Level.DEBUG,
            "No ldconfig cache to read; looking for the KPL daemon's libraries in the standard folders only");
        return Map.of();
    }

    static Map<String, List<Path>> parseLdconfig(String output) {
        Map<String, List<Path>> cache = new HashMap<>();
        for (String line : output.split("\n")) {
            Matcher entry = LDCONFIG_ENTRY.matcher(line);
            if (entry.matches()) {
                cache.computeIfAbsent(entry.group(1), name -> new ArrayList<>()).add(Paths.get(entry.group(3)));
            }
        }
        return cache;
    }

    private static List<Path> glob(Path dir, String pattern) {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir, pattern)) {
            entries.forEach(found::add);
        } catch (IOException | SecurityException absent) {
            // No such folder: no match.
        }
        return found;
    }
}
