package sparkkpl.registrycheck;

import com.amazonaws.services.schemaregistry.common.AWSDeserializerInput;
import com.amazonaws.services.schemaregistry.deserializers.GlueSchemaRegistryDeserializationFacade;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.kinesis.retrieval.AggregatorUtil;
import software.amazon.kinesis.retrieval.KinesisClientRecord;

/**
 * Reads a stream's Kinesis records as a KCL consumer with the Glue Schema Registry's deserializer does:
 * de-aggregated by the KCL's AggregatorUtil, each user record decoded by the registry's own
 * deserialization facade, which fetches the writer's schema from the registry by the id in its header.
 *
 * <p>Arguments: the registry's endpoint and region. Standard input: one Kinesis record per line, its partition
 * key, a tab and its data in base64. Standard output: one line per user record, its partition key, a tab and
 * the decoded record as Avro prints it (JSON).
 */
public final class RegistryReadMain {
    private RegistryReadMain() {}

    public static void main(String[] args) throws Exception {
        List<KinesisClientRecord> stored = new ArrayList<>();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        long sequence = 0;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] fields = line.split("\t", 2);
            stored.add(KinesisClientRecord.builder().partitionKey(fields[0]).sequenceNumber(String.valueOf(sequence++))
                .data(ByteBuffer.wrap(Base64.getDecoder().decode(fields[1]))).build());
        }
        Map<String, String> config = Map.of("endpoint", args[0], "region", args[1], "avroRecordType", "GENERIC_RECORD");
        try (GlueSchemaRegistryDeserializationFacade facade = GlueSchemaRegistryDeserializationFacade.builder()
                .configs(config).credentialProvider(DefaultCredentialsProvider.builder().build()).build()) {
            for (KinesisClientRecord record : new AggregatorUtil().deaggregate(stored)) {
                Object decoded = facade.deserialize(AWSDeserializerInput.builder().buffer(record.data())
                    .transportName("kinesis").build());
                System.out.println(record.partitionKey() + "\t" + decoded);
            }
        }
    }
}
