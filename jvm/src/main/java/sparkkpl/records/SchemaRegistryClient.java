package sparkkpl.records;

import java.util.UUID;
import java.util.function.Supplier;

/**
 * A Glue Schema Registry, asked by the driver once per write for the version id its records carry. The
 * implementation is the optional artifact {@value #ARTIFACT}, found by {@link java.util.ServiceLoader}, so the
 * sink's own jar carries none of the registry client's classes. That artifact brings an AWS SDK of its own,
 * so nothing here is an SDK type.
 */
public interface SchemaRegistryClient {
    /** The Maven coordinates (less the version) of the artifact that implements this interface. */
    String ARTIFACT = "io.github.sparkkpl:spark-kpl-glue";

    /**
     * @return the id of the schema version whose definition is {@code lookup.definition()}
     * @throws IllegalArgumentException naming the schema and the registry: not registered (with auto
     *     registration off), refused as incompatible, or access refused
     */
    UUID schemaVersionId(Lookup lookup);

    /**
     * What the driver asks for.
     *
     * @param dataFormat as the registry names it: AVRO
     * @param compatibility as the registry names it, for a schema created by auto registration
     * @param endpoint optional: Glue of {@code region}
     * @param credentials the write's credentials, resolved anew at each call
     */
    record Lookup(String registryName, String schemaName, String dataFormat, String definition, boolean autoRegister,
                  String compatibility, String endpoint, String region, Supplier<Keys> credentials) {

        /** "schema 'orders' in Glue Schema Registry 'sales'": how errors name what they were about. */
        public String described() {
            return "schema '" + schemaName + "' in Glue Schema Registry '" + registryName + "'";
        }
    }

    /** @param sessionToken null for long-term keys */
    record Keys(String accessKeyId, String secretAccessKey, String sessionToken) {
        /** Never shows the secret or the token. */
        @Override
        public String toString() {
            return "Keys[" + accessKeyId + "]";
        }
    }
}
