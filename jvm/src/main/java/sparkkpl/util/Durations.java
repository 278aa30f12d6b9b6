package sparkkpl.util;

import java.io.IOException;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** Waiting for a duration, and writing one in a log line. */
public final class Durations {
    private Durations() {}

    /** Sleeps, an interrupt kept and turned into an IOException saying what was waited for. */
    public static void sleep(long ms, String doing) throws IOException {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + doing, e);
        }
    }

    /** A duration for a log line, in milliseconds to a tenth. */
    public static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }
}
