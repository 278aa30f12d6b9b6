package sparkkpl.metrics;

/**
 * The figures of every task this JVM ran, added up as each task ends (committed or not), for the
 * executor's metrics source: counts over the JVM's life, peaks the highest any task saw.
 */
public final class ExecutorTotals {
    private static WriteSummary total = WriteSummary.EMPTY;

    private ExecutorTotals() {}

    public static synchronized void taskEnded(WriteSummary task) {
        total = total.plus(task);
    }

    static synchronized WriteSummary total() {
        return total;
    }
}
