package sparkkpl.controlplane;

import java.io.IOException;

/** Kinesis refused a call; {@link #notFound} when it knows no such stream (of that creation time). */
public final class StreamCallFailed extends IOException {
    private static final long serialVersionUID = 1L;
    private final boolean notFound;

    StreamCallFailed(String message, boolean notFound) {
        super(message);
        this.notFound = notFound;
    }

    public boolean notFound() {
        return notFound;
    }
}
