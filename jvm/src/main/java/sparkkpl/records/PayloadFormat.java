package sparkkpl.records;

import java.io.ByteArrayOutputStream;
import java.io.CharArrayWriter;
import java.io.IOException;
import java.io.Serializable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.json.JSONOptions;
import org.apache.spark.sql.catalyst.json.JacksonGenerator;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import sparkkpl.config.Format;

/**
 * How a record's data is made: {@code raw} takes the {@code data} column; {@code json} and
 * {@code avro} serialize every other column of the row with Spark's own writers (those behind
 * {@code to_json} and {@code to_avro}), so the payload matches what Spark produces elsewhere.
 */
public final class PayloadFormat implements Serializable {
    private static final long serialVersionUID = 1L;
    /** spark-avro's classes, absent from Spark's default classpath; reached by reflection. */
    private static final String AVRO_SERIALIZER = "org.apache.spark.sql.avro.AvroSerializer";
    private static final String AVRO_SCHEMA_CONVERTERS = "org.apache.spark.sql.avro.SchemaConverters$";
    /** The record name Spark's to_avro gives the top-level record. */
    private static final String AVRO_RECORD_NAME = "topLevelRecord";

    private final Format format;
    private final String timeZoneId;
    /** Null unless the records carry a schema registry's header. */
    private final RegistryHeader registryHeader;

    PayloadFormat(Format format, String timeZoneId) {
        this(format, timeZoneId, null);
    }

    private PayloadFormat(Format format, String timeZoneId, RegistryHeader registryHeader) {
        this.format = format;
        this.timeZoneId = timeZoneId;
        this.registryHeader = registryHeader;
    }

    /** This Avro format, each record's data preceded by {@code header}. */
    PayloadFormat withRegistryHeader(RegistryHeader header) {
        return new PayloadFormat(format, timeZoneId, header);
    }

    /**
     * JSON writes timestamps in the session's time zone, as to_json does.
     *
     * @throws IllegalArgumentException for avro when Spark's Avro module is not on the classpath
     */
    public static PayloadFormat of(Format format, SparkSession session) {
        if (format == Format.AVRO && !avroModulePresent()) {
            throw new IllegalArgumentException("format=avro needs Spark's Avro module, which is not on the classpath: "
                + "add org.apache.spark:spark-avro_" + scalaBinaryVersion() + ":" + session.version()
                + " (spark-submit --packages, or the spark.jars.packages config)");
        }
        return new PayloadFormat(format, session.conf().get("spark.sql.session.timeZone"));
    }

    /** "2.13" for Scala 2.13.16: the suffix of Spark's Scala artifacts. */
    private static String scalaBinaryVersion() {
        String[] parts = scala.util.Properties.versionNumberString().split("\\.");
        return parts[0] + "." + parts[1];
    }

    private static boolean avroModulePresent() {
        try {
            Class.forName(AVRO_SERIALIZER, false, Thread.currentThread().getContextClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** Whether the whole row (less the key and stream columns) is the payload, rather than a data column. */
    public boolean serializesRow() {
        return format != Format.RAW;
    }

    /** Turns a payload row into bytes; one per task, not thread-safe. */
    interface Serializer {
        byte[] serialize(InternalRow payload);
    }

    Serializer newSerializer(StructType payloadSchema) {
        if (format == Format.JSON) {
            return jsonSerializer(payloadSchema);
        }
        Serializer avro = avroSerializer(payloadSchema);
        return registryHeader == null ? avro : payload -> registryHeader.frame(avro.serialize(payload));
    }

    private Serializer jsonSerializer(StructType schema) {
        CharArrayWriter buffer = new CharArrayWriter();
        JacksonGenerator generator = new JacksonGenerator(schema, buffer,
            new JSONOptions(scala.collection.immutable.Map$.MODULE$.<String, String>empty(), timeZoneId, ""));
        return payload -> {
            buffer.reset();
            generator.write(payload);
            generator.flush();
            return buffer.toString().getBytes(StandardCharsets.UTF_8);
        };
    }

    /** The Avro schema of rows of {@code schema}, as to_avro derives it (SchemaConverters.toAvroType). */
    static Schema avroSchema(StructType schema) throws ReflectiveOperationException {
        Object converters = Class.forName(AVRO_SCHEMA_CONVERTERS).getField("MODULE$").get(null);
        return (Schema) converters.getClass()
            .getMethod("toAvroType", DataType.class, boolean.class, String.class, String.class)
            .invoke(converters, schema, false, AVRO_RECORD_NAME, "");
    }

    /** As Spark's CatalystDataToAvro (to_avro): the row as an Avro datum, in Avro's binary encoding. */
    private static Serializer avroSerializer(StructType schema) {
        try {
            Schema avroSchema = avroSchema(schema);
            Class<?> serializerClass = Class.forName(AVRO_SERIALIZER);
            Object serializer = serializerClass.getConstructor(DataType.class, Schema.class, boolean.class)
                .newInstance(schema, avroSchema, false);
            Method serialize = serializerClass.getMethod("serialize", Object.class);
            GenericDatumWriter<Object> writer = new GenericDatumWriter<>(avroSchema);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            BinaryEncoder[] encoder = {null};
            return payload -> {
                out.reset();
                encoder[0] = EncoderFactory.get().directBinaryEncoder(out, encoder[0]);
                try {
                    writer.write(serialize.invoke(serializer, payload), encoder[0]);
                    encoder[0].flush();
                } catch (IOException | IllegalAccessException | InvocationTargetException e) {
                    throw new IllegalStateException("Avro serialization failed: " + e, e);
                }
                return out.toByteArray();
            };
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Spark's Avro module does not have the classes format=avro uses: " + e, e);
        }
    }
}
