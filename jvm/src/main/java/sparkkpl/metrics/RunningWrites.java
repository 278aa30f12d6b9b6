package sparkkpl.metrics;

import java.util.Map;

/**
 * The Spark SQL execution each running batch write runs in, by the result key spark_kpl.write gave it, so
 * that its progress line can read the write node's live figures from Spark's status store (those the SQL
 * tab shows). Kept from planning until the write's Python side forgets it; one never forgotten (the caller
 * gone) goes after {@link #MAX_KEPT} later ones.
 */
public final class RunningWrites {
    static final int MAX_KEPT = 1_000;
    private static final Map<String, Long> EXECUTIONS = NewestEntries.upTo(MAX_KEPT);

    private RunningWrites() {}

    public static void started(String resultKey, long executionId) {
        EXECUTIONS.put(resultKey, executionId);
    }

    /** The write's SQL execution id, or -1 while it is not planned yet (or when it was forgotten). */
    public static long executionOf(String resultKey) {
        Long id = EXECUTIONS.get(resultKey);
        return id == null ? -1 : id;
    }

    public static void forget(String resultKey) {
        EXECUTIONS.remove(resultKey);
    }
}
