package sparkkpl.records;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import sparkkpl.kinesis.StreamArn;

/**
 * Where a record's parts sit in the rows being written, checked once against the schema:
 * {@code partitionKey}, {@code explicitHashKey}, {@code streamName} and {@code streamArn} (strings, optional), and the
 * payload: the {@code data} column (binary or string, required), or with a serializing format every
 * other column. Column names match case-insensitively, like Spark's.
 */
public final class RowLayout implements Serializable {
    private static final long serialVersionUID = 1L;
    public static final String DATA = "data";
    public static final String PARTITION_KEY = "partitionKey";
    public static final String EXPLICIT_HASH_KEY = "explicitHashKey";
    public static final String STREAM_NAME = "streamName";
    public static final String STREAM_ARN = "streamArn";
    private static final int ABSENT = -1;

    /** The data column; ABSENT when the payload is serialized from {@link #payloadOrdinals}. */
    private final int data;
    private final boolean dataIsString;
    private final int partitionKey;
    private final int explicitHashKey;
    private final int streamName;
    private final int streamArn;
    private final int[] payloadOrdinals;
    private final StructType payloadSchema;
    /** With a streamArn column: the region its ARNs must name (the KPL's), as the driver found it; else null. */
    private final String arnRegion;
    /** With a streamArn column: the account its ARNs must name (the credentials'); else null. */
    private final String arnAccount;

    private RowLayout(int data, boolean dataIsString, int partitionKey, int explicitHashKey, int streamName,
                      int streamArn, int[] payloadOrdinals, StructType payloadSchema, String arnRegion, String arnAccount) {
        this.data = data;
        this.dataIsString = dataIsString;
        this.partitionKey = partitionKey;
        this.explicitHashKey = explicitHashKey;
        this.streamName = streamName;
        this.streamArn = streamArn;
        this.arnRegion = arnRegion;
        this.arnAccount = arnAccount;
        this.payloadOrdinals = payloadOrdinals;
        this.payloadSchema = payloadSchema;
    }

    /**
     * @param serializesRow whether every column other than the keys and stream is the payload
     * @throws IllegalArgumentException naming the column that is missing, unknown or of the wrong type
     */
    public static RowLayout of(StructType schema, boolean serializesRow) {
        int data = ABSENT;
        int partitionKey = ABSENT;
        int explicitHashKey = ABSENT;
        int streamName = ABSENT;
        int streamArn = ABSENT;
        List<Integer> payload = new ArrayList<>();
        StructField[] fields = schema.fields();
        for (int i = 0; i < fields.length; i++) {
            String name = fields[i].name().toLowerCase(Locale.ROOT);
            if (name.equals(PARTITION_KEY.toLowerCase(Locale.ROOT))) {
                partitionKey = stringColumn(fields[i], i);
            } else if (name.equals(EXPLICIT_HASH_KEY.toLowerCase(Locale.ROOT))) {
                explicitHashKey = stringColumn(fields[i], i);
            } else if (name.equals(STREAM_NAME.toLowerCase(Locale.ROOT))) {
                streamName = stringColumn(fields[i], i);
            } else if (name.equals(STREAM_ARN.toLowerCase(Locale.ROOT))) {
                streamArn = stringColumn(fields[i], i);
            } else if (serializesRow) {
                payload.add(i);
            } else if (name.equals(DATA.toLowerCase(Locale.ROOT))) {
                DataType type = fields[i].dataType();
                if (!type.equals(DataTypes.BinaryType) && !type.equals(DataTypes.StringType)) {
                    throw wrongType(fields[i], "binary or string");
                }
                data = i;
            } else {
                throw new IllegalArgumentException("The kpl sink does not know column '" + fields[i].name()
                    + "'. It writes the columns " + DATA + " (binary or string, required), " + PARTITION_KEY
                    + ", " + EXPLICIT_HASH_KEY + ", " + STREAM_NAME + " and " + STREAM_ARN + " (strings); select or rename to these, or "
                    + "set the option format to json or avro to send the other columns as the record.");
            }
        }
        if (serializesRow) {
            if (payload.isEmpty()) {
                throw new IllegalArgumentException("The kpl sink has no column to serialize: every column of "
                    + schema.simpleString() + " is a key or the stream name");
            }
            StructType payloadSchema = new StructType(payload.stream().map(i -> fields[i]).toArray(StructField[]::new));
            return new RowLayout(ABSENT, false, partitionKey, explicitHashKey, streamName, streamArn,
                payload.stream().mapToInt(Integer::intValue).toArray(), payloadSchema, null, null);
        }
        if (data == ABSENT) {
            throw new IllegalArgumentException("The kpl sink needs a column '" + DATA
                + "' (binary or string) holding each record's payload, or the option format=json|avro; the "
                + "DataFrame has " + schema.simpleString());
        }
        return new RowLayout(data, fields[data].dataType().equals(DataTypes.StringType), partitionKey,
            explicitHashKey, streamName, streamArn, null, null, null, null);
    }

    /**
     * This layout, its rows' stream ARNs held to {@code region} and {@code account}: the KPL writes in one
     * region, by name, with credentials of one account.
     */
    public RowLayout withArnScope(String region, String account) {
        return new RowLayout(data, dataIsString, partitionKey, explicitHashKey, streamName, streamArn, payloadOrdinals,
            payloadSchema, region, account);
    }

    private static int stringColumn(StructField field, int ordinal) {
        if (!field.dataType().equals(DataTypes.StringType)) {
            throw wrongType(field, "string");
        }
        return ordinal;
    }

    private static IllegalArgumentException wrongType(StructField field, String expected) {
        return new IllegalArgumentException("Column '" + field.name() + "' must be " + expected + " for the kpl sink, "
            + "but is " + field.dataType().simpleString() + "; cast it first");
    }

    /** The payload, or null when the row's data is null. */
    byte[] data(InternalRow row) {
        if (row.isNullAt(data)) {
            return null;
        }
        return dataIsString ? row.getUTF8String(data).getBytes() : row.getBinary(data);
    }

    boolean dataIsNull(InternalRow row) {
        return data != ABSENT && row.isNullAt(data);
    }

    /** The columns a serializing format writes; null for the raw format. */
    StructType payloadSchema() {
        return payloadSchema;
    }

    /** The row's payload columns, as a row of {@link #payloadSchema()}. */
    InternalRow payload(InternalRow row) {
        Object[] values = new Object[payloadOrdinals.length];
        for (int i = 0; i < values.length; i++) {
            values[i] = row.get(payloadOrdinals[i], payloadSchema.fields()[i].dataType());
        }
        return new GenericInternalRow(values);
    }

    String partitionKey(InternalRow row) {
        return string(row, partitionKey);
    }

    String explicitHashKey(InternalRow row) {
        return string(row, explicitHashKey);
    }

    String streamName(InternalRow row) {
        return string(row, streamName);
    }

    boolean hasPartitionKey() {
        return partitionKey != ABSENT;
    }

    /** The row's stream ARN, or null. */
    String streamArn(InternalRow row) {
        return string(row, streamArn);
    }

    /**
     * Why the row's stream ARN cannot be written, or null: it must name the write's region and account.
     */
    String arnElsewhere(StreamArn arn) {
        if (!arn.region().equals(arnRegion)) {
            return "stream ARN '" + arn + "' is in region " + arn.region() + ", and the write's KPL writes in "
                + arnRegion + " (its Region): write each region's rows in a write of their own";
        }
        if (!arn.account().equals(arnAccount)) {
            return "stream ARN '" + arn + "' is of account " + arn.account() + ", and the write's credentials of "
                + "account " + arnAccount + ": " + StreamArn.CROSS_ACCOUNT_REASON + "; write each account's rows "
                + "with awsRoleArn set to a role in it";
        }
        return null;
    }

    /** Whether rows name their own stream (a {@link #STREAM_NAME} or {@link #STREAM_ARN} column). */
    public boolean namesStreams() {
        return streamName != ABSENT || streamArn != ABSENT;
    }

    /** Whether rows name their stream by ARN (a {@link #STREAM_ARN} column). */
    public boolean namesStreamsByArn() {
        return streamArn != ABSENT;
    }

    public boolean hasExplicitHashKey() {
        return explicitHashKey != ABSENT;
    }

    private static String string(InternalRow row, int ordinal) {
        return ordinal == ABSENT || row.isNullAt(ordinal) ? null : row.getUTF8String(ordinal).toString();
    }
}
