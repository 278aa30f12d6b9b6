package sparkkpl.controlplane;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
import software.amazon.awssdk.protocols.jsoncore.JsonWriter;
import software.amazon.awssdk.utils.AttributeMap;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.aws.AwsRegion;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;

/**
 * The two Kinesis control-plane calls the sink makes itself, from the same KPL settings as the daemon
 * (Region, else the SDK's default region chain as {@link AwsRegion} has it; KinesisEndpoint,
 * KinesisPort, VerifyCertificate, the Proxy* properties, the timeouts and the producer's credentials),
 * so it talks to whatever endpoint the daemon talks to:
 * {@code DescribeStreamSummary} on the driver, once per stream and write (Kinesis allows it 20 times a
 * second per account), and {@code ListShards} on executors, as the KPL's daemon lists (ShardFilter
 * AT_LATEST, 1,000 per page, later pages by NextToken only), for one incarnation of the stream when
 * its creation time is known.
 *
 * <p>The call is made by hand in JSON 1.1 through the SDK's HTTP client and SigV4 signer that the jar
 * already carries, rather than through the SDK's Kinesis client: that client is not in the jar, and it
 * speaks CBOR, which can only be switched off for the whole JVM and which the daemon's endpoints need
 * not speak (docs/aggregation.md).
 *
 * <p>Kept open while used: each producer owns one for its shard maps, and the driver's calls share one
 * per producer spec ({@link DriverClients}).
 */
public final class StreamApi implements ShardMaps.Lister {
    private static final String TARGET_PREFIX = "Kinesis_20131202.";
    private static final String JSON_1_1 = "application/x-amz-json-1.1";
    private static final int PAGE_SIZE = 1000;
    /** Names the sink's calls in Kinesis's logs (CloudTrail's userAgent), as the KPL's daemon names its own. */
    private static final String USER_AGENT = "spark-kpl/" + sinkVersion();
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
     * A client for this spec's endpoint and credentials.
     *
     * @throws Credentials.Unavailable when the spec's credentials give none
     */
    public static StreamApi open(ProducerSpec spec) {
        KinesisProducerConfiguration kpl = spec.kplConfiguration();
        String region = AwsRegion.of(kpl);
        return new StreamApi(kpl, region, Credentials.resolved(spec.credentials(), region));
    }

    /**
     * A client for the endpoint, proxy and timeouts of {@code kpl}, in {@code region}, signing with
     * {@code credentials} (a producer's, so that both resolve and refresh them once).
     */
    public StreamApi(KinesisProducerConfiguration kpl, String region, AwsCredentialsProvider credentials) {
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
     * The stream's open shards now, every page.
     *
     * @param created the stream's creation time as {@link StreamDescription} has it, so that a stream
     *     deleted and created again under the name is not listed as this one; null: whichever has it now
     * @throws IOException naming the stream and Kinesis's error, once retries are spent (a stream
     *     created again since {@code created} is not found)
     */
    @Override
    public ShardMap listShards(String stream, String created) throws IOException {
        long listedAt = System.nanoTime();
        List<ShardMap.Shard> shards = new ArrayList<>();
        String nextToken = null;
        do {
            JsonNode page = call("ListShards", stream, pageRequest(stream, created, nextToken, PAGE_SIZE));
            for (JsonNode shard : page.field("Shards").map(JsonNode::asArray).orElse(List.of())) {
                Map<String, JsonNode> range = shard.field("HashKeyRange").orElseThrow().asObject();
                shards.add(new ShardMap.Shard(shard.field("ShardId").orElseThrow().text(),
                    new BigInteger(range.get("StartingHashKey").text()), new BigInteger(range.get("EndingHashKey").text())));
            }
            nextToken = page.field("NextToken").filter(token -> !token.isNull()).map(JsonNode::text).orElse(null);
        } while (nextToken != null);
        try {
            return new ShardMap(shards, created, listedAt);
        } catch (IllegalArgumentException e) {
            throw new IOException("ListShards of stream '" + stream + "' at " + endpoint + ": " + e.getMessage(), e);
        }
    }

    /**
     * Whether the stream created at {@code created} still has the name, rather than none or another
     * incarnation: one ListShards page of one shard, which names the incarnation.
     *
     * @throws IOException naming the stream and Kinesis's error, once retries are spent
     */
    public boolean stillExists(String stream, String created) throws IOException {
        try {
            call("ListShards", stream, pageRequest(stream, created, null, 1));
            return true;
        } catch (StreamCallFailed e) {
            if (e.notFound()) {
                return false;
            }
            throw e;
        }
    }

    /**
     * What the sink needs to know of a stream before writing to it.
     *
     * @throws IOException naming the stream and Kinesis's error, once retries are spent
     */
    @Override
    public StreamDescription describe(String stream) throws IOException {
        JsonWriter json = JsonWriter.create();
        json.writeStartObject().writeFieldName("StreamName").writeValue(stream).writeEndObject();
        JsonNode summary = call("DescribeStreamSummary", stream, json.getBytes())
            .field("StreamDescriptionSummary").orElseThrow();
        String created = present(summary, "StreamCreationTimestamp").map(JsonNode::asNumber).orElse(null);
        return new StreamDescription(stream, created,
            present(summary, "RecordDistributionStrategy").map(JsonNode::text).orElse(null),
            present(summary, "MaxRecordSizeInKiB").map(node -> Integer.parseInt(node.asNumber()))
                .orElse(StreamDescription.DEFAULT_MAX_RECORD_KIB));
    }

    /** A field of a JSON object that is there and not null (emulators write null for what they lack). */
    private static Optional<JsonNode> present(JsonNode object, String name) {
        return object.field(name).filter(node -> !node.isNull());
    }

    private static byte[] pageRequest(String stream, String created, String nextToken, int pageSize) {
        JsonWriter json = JsonWriter.create();
        json.writeStartObject();
        if (nextToken == null) {
            json.writeFieldName("StreamName").writeValue(stream);
            if (created != null) {
                json.writeFieldName("StreamCreationTimestamp").writeNumber(created);
            }
            json.writeFieldName("ShardFilter").writeStartObject().writeFieldName("Type").writeValue("AT_LATEST")
                .writeEndObject();
        } else {
            json.writeFieldName("NextToken").writeValue(nextToken);
        }
        json.writeFieldName("MaxResults").writeValue(pageSize);
        json.writeEndObject();
        return json.getBytes();
    }

    /**
     * One call, retried with backoff and full jitter on throttling, a server error or a broken
     * connection.
     */
    private JsonNode call(String operation, String stream, byte[] body) throws IOException {
        IOException last = null;
        long deadline = System.nanoTime() + retryForNanos;
        for (int attempt = 1; ; attempt++) {
            if (attempt > 1) {
                long ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(attempt - 2, 16));
                long pauseMs = ceiling / 2 + ThreadLocalRandom.current().nextLong(ceiling / 2 + 1);
                if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(pauseMs) - deadline > 0) {
                    break;
                }
                pause(pauseMs, "calling Kinesis");
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

    /** Kinesis refused a call; {@link #notFound} when it knows no such stream (of that creation time). */
    public static final class StreamCallFailed extends IOException {
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

    private static String sinkVersion() {
        try (InputStream in = StreamApi.class.getResourceAsStream("/sparkkpl/sink-version.txt")) {
            return in == null ? "unknown" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        } catch (IOException e) {
            return "unknown";
        }
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

    /** Sleeps, an interrupt kept and turned into an IOException saying what was waited for. */
    public static void pause(long ms, String doing) throws IOException {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while " + doing, e);
        }
    }
}
