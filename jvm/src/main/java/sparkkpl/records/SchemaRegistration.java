package sparkkpl.records;

import java.util.Iterator;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.UUID;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import sparkkpl.aws.AwsRegion;
import sparkkpl.aws.Credentials;
import sparkkpl.config.SchemaCompression;
import sparkkpl.config.SinkOption;
import sparkkpl.config.WriteOptions;
import sparkkpl.util.SinkVersion;

/**
 * The driver's one question to the Glue Schema Registry per write: the version id of the schema the rows
 * are written in, which the tasks put in every record's header. Tasks never call the registry.
 */
public final class SchemaRegistration {
    private SchemaRegistration() {}

    /**
     * {@code format}, its records headed with the registry's header when the options name a registry.
     *
     * @throws IllegalArgumentException naming the option, the artifact, or the schema and registry at fault
     */
    public static PayloadFormat headed(PayloadFormat format, RowLayout layout, WriteOptions options) {
        WriteOptions.Registry registry = options.registry();
        if (!registry.used()) {
            return format;
        }
        String schemaName = registry.schemaName() != null ? registry.schemaName() : options.target().streamName();
        if (schemaName == null) {
            throw new IllegalArgumentException("Option '" + SinkOption.SCHEMA_REGISTRY_NAME.optionName() + "' needs a "
                + "schema name: set the option '" + SinkOption.SCHEMA_NAME.optionName() + "', which defaults to the "
                + "option '" + SinkOption.STREAM_NAME.optionName() + "' (the rows name their streams here)");
        }
        String definition;
        try {
            definition = PayloadFormat.avroSchema(layout.payloadSchema()).toString();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Spark's Avro module does not have the classes format=avro uses: " + e, e);
        }
        String region = AwsRegion.of(options.producer().kplConfiguration());
        SchemaRegistryClient.Lookup lookup = new SchemaRegistryClient.Lookup(registry.schemaRegistryName(), schemaName,
            options.shape().format().name(), definition, registry.schemaAutoRegistration(),
            registry.schemaCompatibility().name(), registry.schemaRegistryEndpoint(), region,
            keys(Credentials.checkedProvider(options.producer().credentials(), region)));
        UUID versionId = client().schemaVersionId(lookup);
        return format.withRegistryHeader(new RegistryHeader(versionId, registry.schemaCompression() == SchemaCompression.ZLIB));
    }

    private static Supplier<SchemaRegistryClient.Keys> keys(AwsCredentialsProvider provider) {
        return () -> {
            AwsCredentials resolved = provider.resolveCredentials();
            return new SchemaRegistryClient.Keys(resolved.accessKeyId(), resolved.secretAccessKey(),
                resolved instanceof AwsSessionCredentials session ? session.sessionToken() : null);
        };
    }

    /** The registry client of the optional artifact, from the classpath the write runs with. */
    static SchemaRegistryClient client() {
        try {
            Iterator<SchemaRegistryClient> found = ServiceLoader.load(SchemaRegistryClient.class,
                Thread.currentThread().getContextClassLoader()).iterator();
            if (found.hasNext()) {
                return found.next();
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("The Glue Schema Registry client of " + SchemaRegistryClient.ARTIFACT
                + " could not be loaded: " + e.getMessage(), e);
        }
        throw new IllegalArgumentException("Option '" + SinkOption.SCHEMA_REGISTRY_NAME.optionName() + "' ("
            + SinkOption.SCHEMA_REGISTRY_NAME.confKey() + ") needs the artifact " + SchemaRegistryClient.ARTIFACT
            + ", which is not on the classpath: add " + SchemaRegistryClient.ARTIFACT + ":" + SinkVersion.of()
            + " beside the sink (spark-submit --packages, or its jar with --jars / spark.jars)");
    }
}
