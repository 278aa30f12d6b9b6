package sparkkpl.util;

import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** THROWAWAY: one INFO line per point of a micro-batch, with the wall clock in microseconds. */
public final class Timeline {
    private static final Logger LOG = LoggerFactory.getLogger(Timeline.class);

    private Timeline() {}

    public static void mark(String what) {
        Instant now = Instant.now();
        LOG.info("TIMELINE {} {}", now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000, what);
    }

    public static void markAt(String what, long nanoTime) {
        long ago = (System.nanoTime() - nanoTime) / 1_000;
        Instant now = Instant.now();
        LOG.info("TIMELINE {} {}", now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000 - ago, what);
    }
}
