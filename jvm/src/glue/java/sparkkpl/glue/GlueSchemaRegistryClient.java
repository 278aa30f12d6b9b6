package sparkkpl.glue;

import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.glue.GlueClient;
import software.amazon.awssdk.services.glue.GlueClientBuilder;
import software.amazon.awssdk.services.glue.model.AccessDeniedException;
import software.amazon.awssdk.services.glue.model.CreateSchemaResponse;
import software.amazon.awssdk.services.glue.model.EntityNotFoundException;
import software.amazon.awssdk.services.glue.model.GetSchemaByDefinitionResponse;
import software.amazon.awssdk.services.glue.model.GlueException;
import software.amazon.awssdk.services.glue.model.RegisterSchemaVersionResponse;
import software.amazon.awssdk.services.glue.model.RegistryId;
import software.amazon.awssdk.services.glue.model.SchemaId;
import software.amazon.awssdk.services.glue.model.SchemaVersionStatus;
import sparkkpl.records.SchemaRegistryClient;

/**
 * The sink's registry client on the AWS SDK's Glue client: GetSchemaByDefinition, and with auto registration
 * CreateRegistry, CreateSchema or RegisterSchemaVersion for what is absent, waiting out the registry's
 * compatibility check. Run on the driver, once per write.
 */
public final class GlueSchemaRegistryClient implements SchemaRegistryClient {
    /** How long a new version may stay PENDING (the registry checking compatibility) before the write fails. */
    private static final Duration CHECK_WAIT = Duration.ofSeconds(60);
    private static final Duration CHECK_POLL = Duration.ofMillis(500);
    /** What an unknown or unsigned caller gets, as well as AccessDeniedException's status. */
    private static final int HTTP_FORBIDDEN = 403;

    @Override
    public UUID schemaVersionId(Lookup lookup) {
        try (GlueClient glue = client(lookup)) {
            return versionId(glue, lookup);
        } catch (GlueException e) {
            boolean refused = e instanceof AccessDeniedException || e.statusCode() == HTTP_FORBIDDEN;
            throw new IllegalArgumentException("The Glue Schema Registry " + (refused ? "refused access to" : "failed the "
                + "lookup of") + " the " + lookup.described() + " (credentials of the write's aws* options, " + where(lookup)
                + "): " + e.getMessage(), e);
        } catch (SdkClientException e) {
            throw new IllegalArgumentException("The Glue Schema Registry could not be reached for the " + lookup.described()
                + " (" + where(lookup) + ", option schemaRegistryEndpoint): " + e.getMessage(), e);
        }
    }

    private static String where(Lookup lookup) {
        return lookup.endpoint() != null ? "endpoint " + lookup.endpoint() : "Glue of Region " + lookup.region();
    }

    private static GlueClient client(Lookup lookup) {
        GlueClientBuilder builder = GlueClient.builder().region(Region.of(lookup.region()))
            .credentialsProvider(() -> credentials(lookup.credentials().get()))
            .httpClientBuilder(ApacheHttpClient.builder());
        if (lookup.endpoint() != null) {
            builder.endpointOverride(URI.create(lookup.endpoint()));
        }
        return builder.build();
    }

    private static AwsCredentials credentials(Keys keys) {
        return keys.sessionToken() == null ? AwsBasicCredentials.create(keys.accessKeyId(), keys.secretAccessKey())
            : AwsSessionCredentials.create(keys.accessKeyId(), keys.secretAccessKey(), keys.sessionToken());
    }

    private static UUID versionId(GlueClient glue, Lookup lookup) {
        SchemaId schema = SchemaId.builder().registryName(lookup.registryName()).schemaName(lookup.schemaName()).build();
        try {
            GetSchemaByDefinitionResponse found = glue.getSchemaByDefinition(request -> request.schemaId(schema)
                .schemaDefinition(lookup.definition()));
            return available(glue, lookup, found.schemaVersionId(), found.status());
        } catch (EntityNotFoundException e) {
            if (!lookup.autoRegister()) {
                throw new IllegalArgumentException("The " + lookup.described() + " has no version with the write's "
                    + "schema (" + e.awsErrorDetails().errorMessage() + "), and schemaAutoRegistration is false: register "
                    + "the schema below, or set schemaAutoRegistration=true. The write's schema: " + lookup.definition(), e);
            }
        }
        return registered(glue, lookup, schema);
    }

    /** Registers the definition as a new version of the schema, creating the registry and the schema if absent. */
    private static UUID registered(GlueClient glue, Lookup lookup, SchemaId schema) {
        try {
            RegisterSchemaVersionResponse version = glue.registerSchemaVersion(request -> request.schemaId(schema)
                .schemaDefinition(lookup.definition()));
            return available(glue, lookup, version.schemaVersionId(), version.status());
        } catch (EntityNotFoundException absentSchema) {
            createRegistryIfAbsent(glue, lookup.registryName());
            CreateSchemaResponse created = glue.createSchema(request -> request
                .registryId(RegistryId.builder().registryName(lookup.registryName()).build())
                .schemaName(lookup.schemaName()).dataFormat(lookup.dataFormat()).compatibility(lookup.compatibility())
                .schemaDefinition(lookup.definition()));
            return available(glue, lookup, created.schemaVersionId(), created.schemaVersionStatus());
        }
    }

    private static void createRegistryIfAbsent(GlueClient glue, String registryName) {
        RegistryId registry = RegistryId.builder().registryName(registryName).build();
        try {
            glue.getRegistry(request -> request.registryId(registry));
        } catch (EntityNotFoundException e) {
            glue.createRegistry(request -> request.registryName(registryName)
                .description("Created by spark-kpl's schema auto registration"));
        }
    }

    /** The version's id once the registry has found it compatible; a version it refused fails the write. */
    private static UUID available(GlueClient glue, Lookup lookup, String versionId, SchemaVersionStatus status) {
        long deadline = System.nanoTime() + CHECK_WAIT.toNanos();
        SchemaVersionStatus now = status;
        while (now == SchemaVersionStatus.PENDING && System.nanoTime() < deadline) {
            try {
                Thread.sleep(CHECK_POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted waiting for the registry's check of the " + lookup.described(), e);
            }
            now = glue.getSchemaVersion(request -> request.schemaVersionId(versionId)).status();
        }
        if (now != SchemaVersionStatus.AVAILABLE) {
            throw new IllegalArgumentException("The " + lookup.described() + " did not take the write's schema as a new "
                + "version: its status is " + now + (now == SchemaVersionStatus.FAILURE ? " (not compatible with the "
                + "schema's earlier versions under its compatibility mode)" : "") + ". The write's schema: "
                + lookup.definition());
        }
        return UUID.fromString(versionId);
    }
}
