package sparkkpl.controlplane;

import java.io.IOException;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.util.SharedPool;

/**
 * The driver's Kinesis clients, one per producer spec (so per endpoint, region and credentials), kept
 * for the spec's idle timeout after their last use and closed when the JVM exits: a streaming query's
 * driver checks its stream at every micro-batch's commit, and a client per call would pay a new
 * connection (TCP and TLS handshakes, each a round trip to Kinesis) and, with a role, an STS call.
 */
final class DriverClients {
    private static final SharedPool<ProducerSpec, Client> CLIENTS = SharedPool.closedWhenIdle();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(CLIENTS::closeAll, "spark-kpl-driver-clients-shutdown"));
    }

    private DriverClients() {}

    /** A call the driver makes to Kinesis itself. */
    interface StreamCall<T> {
        T call(StreamApi api) throws IOException;
    }

    /**
     * Makes {@code call} with the JVM's client for this spec, opened if needed.
     *
     * @throws Credentials.Unavailable when the spec's credentials give none
     */
    static <T> T withStreamApi(ProducerSpec spec, StreamCall<T> call) throws IOException {
        Client client = CLIENTS.acquire(spec, () -> new Client(StreamApi.open(spec), spec));
        try {
            return call.call(client.api);
        } finally {
            CLIENTS.release(client);
        }
    }

    /** A client as the pool keeps it. */
    private record Client(StreamApi api, ProducerSpec spec) implements SharedPool.Pooled {
        @Override
        public boolean isBroken() {
            return false;
        }

        @Override
        public void awaitReady() {
        }

        @Override
        public long idleTimeoutMs() {
            return spec.producerIdleTimeoutMs();
        }

        @Override
        public void close() {
            api.close();
        }
    }
}
