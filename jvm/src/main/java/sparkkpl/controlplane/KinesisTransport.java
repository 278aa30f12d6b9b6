package sparkkpl.controlplane;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.http.conn.ssl.NoopHostnameVerifier;
import org.apache.http.conn.ssl.SSLConnectionSocketFactory;
import org.apache.http.conn.ssl.TrustAllStrategy;
import org.apache.http.ssl.SSLContexts;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.HttpExecuteRequest;
import software.amazon.awssdk.http.HttpExecuteResponse;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.SdkHttpConfigurationOption;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.apache.ProxyConfiguration;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.protocols.jsoncore.JsonNodeParser;
import software.amazon.awssdk.utils.AttributeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.util.Durations;
import sparkkpl.util.SinkVersion;

/**
 * How {@link StreamApi}'s calls reach Kinesis: JSON 1.1 over the SDK's Apache HTTP client, through the
 * KPL settings' endpoint, port, proxy, TLS verification and timeouts, signed with SigV4, and retried
 * with backoff through throttling, server errors and broken connections.
 *
 * <p>Made by hand through the SDK's HTTP client and SigV4 signer that the jar already carries, rather
 * than through the SDK's Kinesis client: that client is not in the jar, and it speaks CBOR, which can
 * only be switched off for the whole JVM and which the daemon's endpoints need not speak
 * (docs/aggregation.md).
 */
final class KinesisTransport implements AutoCloseable {
    private static final String TARGET_PREFIX = "Kinesis_20131202.";
    private static final String JSON_1_1 = "application/x-amz-json-1.1";
    /** Names the sink's calls in Kinesis's logs (CloudTrail's userAgent), as the KPL's daemon names its own. */
    private static final String USER_AGENT = "spark-kpl/" + SinkVersion.of();
    /**
     * Kinesis allows ListShards 1,000 times a second per stream and DescribeStreamSummary 20 times a
     * second per account, shared with every other caller: a refusal is waited out, with jitter so that
     * the executors refused together do not come back together.
     */
    private static final long FIRST_BACKOFF_MS = 100;
    private static final long MAX_BACKOFF_MS = 5_000;
    private static final long MAX_RETRY_MS = 300_000;

    private final SdkHttpClient http;
    private final AwsCredentialsProvider credentials;
    private final String region;
    private final URI endpoint;
    /**
     * How long a call is retried through throttling, server errors and broken connections: the
     * KPL's RecordTtl, as long as the KPL itself retries a record (an endpoint down when a write
     * starts fails neither), capped so that a huge TTL cannot hold a listing for ever.
     */
    private final long retryForNanos;

    /**
     * Connections as {@code kpl} configures the daemon's, to Kinesis in {@code region}, signed with
     * {@code credentials}.
     */
    KinesisTransport(KinesisProducerConfiguration kpl, String region, AwsCredentialsProvider credentials) {
        this.region = region;
        String host = kpl.getKinesisEndpoint().isEmpty()
            ? "kinesis." + region + (region.startsWith("cn-") ? ".amazonaws.com.cn" : ".amazonaws.com")
            : kpl.getKinesisEndpoint();
        this.endpoint = URI.create("https://" + host + ":" + kpl.getKinesisPort());
        this.retryForNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(kpl.getRecordTtl(), MAX_RETRY_MS));
        this.credentials = credentials;
        ApacheHttpClient.Builder client = ApacheHttpClient.builder()
            .connectionTimeout(Duration.ofMillis(kpl.getConnectTimeout()))
            .socketTimeout(Duration.ofMillis(kpl.getRequestTimeout()));
        if (!kpl.getProxyHost().isEmpty()) {
            client.proxyConfiguration(ProxyConfiguration.builder()
                .endpoint(URI.create("http://" + kpl.getProxyHost() + ":" + kpl.getProxyPort()))
                .username(kpl.getProxyUserName().isEmpty() ? null : kpl.getProxyUserName())
                .useSystemPropertyValues(false).useEnvironmentVariableValues(false)
                .build());
        }
        if (!kpl.isVerifyCertificate() && isLoopback(host)) {
            // A test endpoint on this machine, with a self-signed certificate: the SDK would warn on every client
            // that trusts all certificates, which says nothing a user can act on here; elsewhere it still warns.
            client.socketFactory(trustingEveryCertificate());
        }
        this.http = client.buildWithDefaults(AttributeMap.builder()
            .put(SdkHttpConfigurationOption.TRUST_ALL_CERTIFICATES, !kpl.isVerifyCertificate())
            .build());
    }

    /** Closes its connections. */
    @Override
    public void close() {
        http.close();
    }

    /** Whether {@code host} is this machine's loopback interface; a name is looked up, and one not found is not. */
    static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** What the SDK's client does with VerifyCertificate=false: any certificate, any host name. */
    private static SSLConnectionSocketFactory trustingEveryCertificate() {
        try {
            return new SSLConnectionSocketFactory(SSLContexts.custom().loadTrustMaterial(TrustAllStrategy.INSTANCE)
                .build(), NoopHostnameVerifier.INSTANCE);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("The JVM has no TLS context to trust any certificate with", e);
        }
    }

    /**
     * One call, retried with backoff and full jitter on throttling, a server error or a broken
     * connection.
     */
    JsonNode call(String operation, String stream, byte[] body) throws IOException {
        IOException last = null;
        long deadline = System.nanoTime() + retryForNanos;
        for (int attempt = 1; ; attempt++) {
            if (attempt > 1) {
                long ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(attempt - 2, 16));
                long pauseMs = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
                if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMs) - deadline > 0) {
                    break;
                }
                Durations.sleep(pauseMs, "calling Kinesis");
            }
            HttpExecuteResponse response;
            byte[] answer;
            try {
                response = http.prepareRequest(signed(operation, body)).call();
                answer = readAll(response);
            } catch (IOException e) {
                last = new IOException(operation + " of stream '" + stream + "' at " + endpoint + ": " + e, e);
                continue;
            }
            int status = response.httpResponse().statusCode();
            if (status == 200) {
                return JsonNodeParser.create().parse(answer);
            }
            String error = errorOf(answer);
            last = new StreamCallFailed(operation + " of stream '" + stream + "' at " + endpoint + " failed: HTTP "
                + status + " " + error, error.startsWith("ResourceNotFoundException"));
            if (status < 500 && !error.startsWith("LimitExceededException")) {
                break;
            }
        }
        throw last;
    }

    /** Where the calls go, for errors that name it. */
    URI endpoint() {
        return endpoint;
    }

    private HttpExecuteRequest signed(String operation, byte[] body) {
        SdkHttpRequest request = SdkHttpRequest.builder().method(SdkHttpMethod.POST).uri(endpoint)
            .putHeader("Content-Type", JSON_1_1).putHeader("X-Amz-Target", TARGET_PREFIX + operation)
            .putHeader("Content-Length", String.valueOf(body.length)).putHeader("User-Agent", USER_AGENT).build();
        SignedRequest signed = AwsV4HttpSigner.create().sign(r -> r
            .identity(credentials.resolveCredentials())
            .request(request)
            .payload(ContentStreamProvider.fromByteArray(body))
            .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "kinesis")
            .putProperty(AwsV4HttpSigner.REGION_NAME, region));
        return HttpExecuteRequest.builder().request(signed.request()).contentStreamProvider(signed.payload().orElseThrow())
            .build();
    }

    private static byte[] readAll(HttpExecuteResponse response) throws IOException {
        if (response.responseBody().isEmpty()) {
            return new byte[0];
        }
        try (InputStream in = response.responseBody().get()) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    /** Kinesis's error type and message, from a JSON error body (the whole body when it is not one). */
    private static String errorOf(byte[] answer) {
        String text = new String(answer, StandardCharsets.UTF_8);
        try {
            Map<String, JsonNode> error = JsonNodeParser.create().parse(answer).asObject();
            String type = error.containsKey("__type") ? error.get("__type").text() : "";
            type = type.substring(type.lastIndexOf('#') + 1);
            JsonNode message = error.containsKey("message") ? error.get("message") : error.get("Message");
            return type + (message == null ? "" : ": " + message.text());
        } catch (RuntimeException e) {
            return text.substring(0, Math.min(text.length(), 300));
        }
    }
}
