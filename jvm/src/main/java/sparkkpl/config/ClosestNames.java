package sparkkpl.config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * The known names a mistyped one was probably meant to be, for an error's "did you mean". Names are
 * compared as the sink matches them (in any case) and also without {@code _}, {@code -} and {@code .}, so
 * that Python's {@code fail_on_error} finds {@code failOnError}; then by edit distance, allowing about one
 * typo in four letters, so that a name close to none gets no suggestion rather than a random one.
 */
final class ClosestNames {
    /** Beyond this many, the names are too alike for a suggestion to help. */
    private static final int MOST_SHOWN = 3;

    private ClosestNames() {}

    /** The known names nearest to {@code given}, nearest first (ties in the order known); empty when none is close. */
    static List<String> to(String given, Collection<String> known) {
        String wanted = comparable(given);
        int allowed = Math.min(3, Math.max(1, wanted.length() / 4));
        int best = allowed + 1;
        List<String> nearest = new ArrayList<>();
        for (String name : known) {
            int distance = distance(wanted, comparable(name));
            if (distance < best) {
                best = distance;
                nearest.clear();
            }
            if (distance == best) {
                nearest.add(name);
            }
        }
        return nearest.size() > MOST_SHOWN ? List.of() : nearest;
    }

    /** The sentence an error adds for the names nearest to {@code given}; empty when none is close. */
    static String didYouMean(String given, Collection<String> known) {
        List<String> nearest = to(given, known);
        return nearest.isEmpty() ? "" : " Did you mean '" + String.join("' or '", nearest) + "'?";
    }

    private static String comparable(String name) {
        return name.toLowerCase(Locale.ROOT).replaceAll("[_.\\-]", "");
    }

    /** Levenshtein distance: the fewest inserted, deleted or replaced characters turning a into b. */
    private static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replaced = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replaced, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] done = previous;
            previous = current;
            current = done;
        }
        return previous[b.length()];
    }
}
