package sparkkpl.spark;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import sparkkpl.aggregation.ShardAggregator;
import sparkkpl.config.Format;
import sparkkpl.config.NullData;
import sparkkpl.config.RecordId;
import sparkkpl.config.WriteOptions;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.failures.RowRejected;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.producer.KplRecord;
import sparkkpl.producer.TaskRecord;
import sparkkpl.records.Partitioning;
import sparkkpl.records.PayloadFormat;
import sparkkpl.records.RecordAssembler;
import sparkkpl.records.RowLayout;

/**
 * Runs synthetic rows through the task side of the sink's row path, with no network and no producer, so
 * that HotSpot has profiled and compiled it before a fresh JVM's first write does (issue #51): each row
 * is made into its record by the {@link RecordAssembler} a task uses, hashed and routed over a
 * synthetic map of {@link #SHARDS} shards and packed into aggregates by the {@link ShardAggregator} of
 * aggregation=executor, which are built and dropped. What needs a live task or producer
 * ({@code KplDataWriter}, {@code TaskFeed}'s room and hand-off to the KPL) is not run.
 *
 * <p>The rows are shaped as the benchmarks' (bench/coldstart.py): a 100-byte binary data column and a
 * distinct string partition key per row, in {@link UnsafeRow}s as a task reads them from a scan or cache,
 * so that the call sites see the types a real write brings.
 */
final class RowPathWarmUp implements Runnable {
    /**
     * Rows per warm-up. HotSpot's C2 takes a method after about 15,000 calls and loop turns
     * (Tier4CompileThreshold), later when the compilers' queues are long, as they are in a fresh JVM:
     * 250,000 rows pass each per-row method more than ten times that, and call what runs once per
     * aggregate (about 500 rows of 100 bytes) some 500 times, whose loops over the rows compile by
     * their turns. About a second of one core once compiled.
     */
    static final int ROWS = 250_000;
    static final int DATA_BYTES = 100;
    /** The benchmarks' stream's shards: enough targets that the aggregator's lookups are not trivially one. */
    static final int SHARDS = 16;
    /** As the KPL's AggregationMaxSize default, the sink's aggregateMaxBytes default. */
    private static final int AGGREGATE_MAX_BYTES = 51_200;
    private static final String STREAM = "spark-kpl-warm-up";
    private static final StructType SCHEMA = new StructType()
        .add(RowLayout.DATA, DataTypes.BinaryType).add(RowLayout.PARTITION_KEY, DataTypes.StringType);

    private final int rows;
    /** Read once its thread ended (or on it). */
    private long rowsThrough;
    private long sealed;

    RowPathWarmUp(int rows) {
        this.rows = rows;
    }

    int rows() {
        return rows;
    }

    /** {@link #rows()} once it ran to its end, else 0. */
    long rowsThrough() {
        return rowsThrough;
    }

    /** The aggregates (or lone records) it built and dropped. */
    long sealed() {
        return sealed;
    }

    @Override
    public void run() {
        RowLayout layout = RowLayout.of(SCHEMA, false);
        Partitioning byColumn = Partitioning.chosen(null, null, layout);
        Map<String, StreamDescription> described = Map.of(STREAM,
            new StreamDescription(STREAM, null, null, StreamDescription.DEFAULT_MAX_RECORD_KIB));
        RecordAssembler assembler = new RecordAssembler(options(), layout, PayloadFormat.raw(), byColumn, null, 0,
            described);
        ShardMaps maps = new ShardMaps(new SyntheticStream(), System::nanoTime);
        try {
            ShardAggregator aggregator = new ShardAggregator(maps, Long.MAX_VALUE, Long.MAX_VALUE, AGGREGATE_MAX_BYTES,
                byColumn.choosesKeys(), byColumn.drawsRandomKeys(), new RowStreams(described, "warm-up", System::nanoTime));
            Consumer<KplRecord> drop = record -> sealed++;
            UnsafeRowWriter writer = new UnsafeRowWriter(SCHEMA.size());
            byte[] data = new byte[DATA_BYTES];
            for (long rowNumber = 1; rowNumber <= rows; rowNumber++) {
                KinesisRecord record = assembler.assemble(row(writer, data, rowNumber), rowNumber);
                aggregator.add(new TaskRecord(record, rowNumber, record.bytes()), drop);
            }
            aggregator.sealAll(drop);
            rowsThrough = rows;
        } catch (RowRejected e) {
            throw new IllegalStateException("the warm-up's own row was rejected: " + e.failure(), e);
        } finally {
            maps.close();
        }
    }

    /** Row {@code rowNumber} as a scan writes it: its number in the data, key "k" and the number. */
    private static UnsafeRow row(UnsafeRowWriter writer, byte[] data, long rowNumber) {
        byte[] number = Long.toString(rowNumber).getBytes(StandardCharsets.US_ASCII);
        Arrays.fill(data, (byte) 'x');
        System.arraycopy(number, 0, data, 0, number.length);
        writer.reset();
        writer.zeroOutNullBytes();
        writer.write(0, data);
        writer.write(1, UTF8String.fromString("k" + rowNumber));
        return writer.getRow();
    }

    /**
     * What the {@link RecordAssembler} reads of a write's options (the target and the record's shape), as a
     * default write gives them; the options are parsed on the driver alone (ExecutorsParseNothingTest), and
     * the groups it does not read are left out.
     */
    private static WriteOptions options() {
        return new WriteOptions(new WriteOptions.Target(STREAM, null, null), null,
            new WriteOptions.RecordShape(Format.RAW, NullData.FAIL, StreamDescription.DEFAULT_MAX_RECORD_KIB * 1024L,
                RecordId.NONE, null), null, null, null, null, null, Map.of());
    }

    /** The warm-up's stream, as ListShards would give it: {@link #SHARDS} equal ranges; it never calls Kinesis. */
    private static final class SyntheticStream implements ShardMaps.Lister {
        @Override
        public ShardMap listShards(String stream, String created) {
            BigInteger width = BigInteger.TWO.pow(128).divide(BigInteger.valueOf(SHARDS));
            List<ShardMap.Shard> shards = new ArrayList<>();
            for (int i = 0; i < SHARDS; i++) {
                BigInteger start = width.multiply(BigInteger.valueOf(i));
                BigInteger end = i == SHARDS - 1 ? BigInteger.TWO.pow(128).subtract(BigInteger.ONE)
                    : start.add(width).subtract(BigInteger.ONE);
                shards.add(new ShardMap.Shard("shardId-" + i, start, end));
            }
            return new ShardMap(shards, created, System.nanoTime());
        }

        @Override
        public StreamDescription describe(String stream) {
            return new StreamDescription(stream, null, null, StreamDescription.DEFAULT_MAX_RECORD_KIB);
        }

        @Override
        public void close() {
        }
    }
}
