package sparkkpl.controlplane;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.protocols.jsoncore.JsonNode;
import software.amazon.awssdk.protocols.jsoncore.JsonWriter;
import software.amazon.kinesis.producer.KinesisProducerConfiguration;
import sparkkpl.aws.AwsRegion;
import sparkkpl.aws.Credentials;
import sparkkpl.config.ProducerSpec;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamArn;
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
 * <p>Each call goes through a {@link KinesisTransport} (HTTP, SigV4, retries). Kept open while used: each producer owns one for its shard maps, and the driver's calls share one
 * per producer spec ({@link DriverClients}).
 */
public final class StreamApi implements ShardMaps.Lister {
    private static final int PAGE_SIZE = 1000;

    private final KinesisTransport transport;
    /** With a streamArn option: the streams' account and region, so that calls name them by ARN; else null. */
    private final StreamArn addressedBy;

    /**
     * A client for this spec's endpoint and credentials.
     *
     * @throws Credentials.Unavailable when the spec's credentials give none
     */
    public static StreamApi open(ProducerSpec spec) {
        KinesisProducerConfiguration kpl = spec.kplConfiguration();
        String region = AwsRegion.of(kpl);
        return new StreamApi(kpl, region, Credentials.checkedProvider(spec.credentials(), region), spec.streamArn());
    }

    /**
     * A client for the endpoint, proxy and timeouts of {@code kpl}, in {@code region}, signing with
     * {@code credentials} (a producer's, so that both resolve and refresh them once).
     *
     * @param streamArn null, or a stream ARN: then every call names its stream by ARN in that account and region
     */
    public StreamApi(KinesisProducerConfiguration kpl, String region, AwsCredentialsProvider credentials,
                     String streamArn) {
        this.transport = new KinesisTransport(kpl, region, credentials);
        this.addressedBy = streamArn == null ? null : StreamArn.parse(streamArn);
    }

    /** Closes its connections. */
    @Override
    public void close() {
        transport.close();
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
            JsonNode page = transport.call("ListShards", stream, pageRequest(stream, created, nextToken, PAGE_SIZE));
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
            throw new IOException("ListShards of stream '" + stream + "' at " + transport.endpoint() + ": " + e.getMessage(), e);
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
            transport.call("ListShards", stream, pageRequest(stream, created, null, 1));
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
        json.writeStartObject();
        nameStream(json, stream);
        json.writeEndObject();
        JsonNode summary = transport.call("DescribeStreamSummary", stream, json.getBytes())
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

    /** Kinesis takes StreamARN in place of StreamName: by ARN, a call reaches the stream's own account. */
    private void nameStream(JsonWriter json, String stream) {
        if (addressedBy == null) {
            json.writeFieldName("StreamName").writeValue(stream);
        } else {
            json.writeFieldName("StreamARN").writeValue(addressedBy.sibling(stream));
        }
    }

    private byte[] pageRequest(String stream, String created, String nextToken, int pageSize) {
        JsonWriter json = JsonWriter.create();
        json.writeStartObject();
        if (nextToken == null) {
            nameStream(json, stream);
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
}
