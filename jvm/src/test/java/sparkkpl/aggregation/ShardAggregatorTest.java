package sparkkpl.aggregation;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.Test;
import sparkkpl.controlplane.FakeLister;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.ShardMap;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.producer.KplRecord;
import sparkkpl.producer.TaskRecord;

/** A task's grouping with sink-chosen keys (no shard map needed): one open aggregate per stream. */
public class ShardAggregatorTest {
    private static final byte[] DATA = new byte[10_000];
    /**
     * The streams the tests write to ("s", "one", "two", and "s0" to "s9999" as many targets), as if the driver had
     * described them: a stream only rows name would be described by the task, over the network.
     */
    private static final Map<String, StreamDescription> DESCRIBED = Stream.concat(Stream.of("s", "one", "two"),
            IntStream.range(0, 10_000).mapToObj(i -> "s" + i))
        .collect(Collectors.toMap(name -> name,
            name -> new StreamDescription(name, null, null, StreamDescription.DEFAULT_MAX_RECORD_KIB)));
    /** The sink draws every key at random here, so no shard is ever looked up. */
    private static final ShardMaps NO_LISTING = new ShardMaps(new ShardMaps.Lister() {
        @Override
        public ShardMap listShards(String stream, String created) {
            throw new AssertionError("listed " + stream);
        }

        @Override
        public StreamDescription describe(String stream) {
            throw new AssertionError("described " + stream);
        }

        @Override
        public void close() {
        }
    }, System::nanoTime);
    /** Streams whose shards cannot be listed (ListShards not allowed). */
    private static final ShardMaps UNLISTABLE = new ShardMaps(new ShardMaps.Lister() {
        @Override
        public ShardMap listShards(String stream, String created) throws IOException {
            throw new IOException("not allowed to list " + stream);
        }

        @Override
        public StreamDescription describe(String stream) throws IOException {
            throw new IOException("not allowed to describe " + stream);
        }

        @Override
        public void close() {
        }
    }, System::nanoTime);
    private final ShardAggregator aggregator =
        new ShardAggregator(NO_LISTING, 100_000, 16L << 20, 51_200, true, true,
            new RowStreams(DESCRIBED, "look", System::nanoTime));
    private final List<KplRecord> handedOn = new ArrayList<>();
    private long added;

    @Test
    public void aStreamOnlyRowsNameIsListedForTheIncarnationItsJvmDescribed() {
        FakeLister lister = new FakeLister(System::nanoTime);
        lister.created.put("named", "1700000000");
        ShardMaps maps = new ShardMaps(lister, System::nanoTime);
        RowStreams streams = new RowStreams(Map.of(), "look", System::nanoTime);
        streams.use(maps);
        ShardAggregator keyed = new ShardAggregator(maps, 100_000, 16L << 20, 51_200, false, false, streams);

        streams.placement("named");
        keyed.add(new TaskRecord(new KinesisRecord("named", "k", null, DATA), 1, DATA.length + 1), handedOn::add);

        assertEquals("never by name alone: a map of a stream deleted since would fit it for its age",
            List.of("1700000000"), lister.listedFor);
    }

    @Test
    public void openAggregatesStayUnderTheTaskCapByLettingTheFullestGo() {
        for (int round = 0; round < 4; round++) {
            for (int stream = 0; stream < 1_000; stream++) {
                add("s" + stream);
            }
        }

        long open = added - carried(handedOn);
        assertTrue("open " + open * DATA.length + " bytes", open * DATA.length <= ShardAggregator.MAX_OPEN_BYTES);
        assertTrue("the cap was reached, so aggregates left early", !handedOn.isEmpty());
    }

    @Test
    public void pastTheTaskCapTheFullestLeaveTogetherSoThatTheNextLookComesAQuarterCapLater() {
        int records = 0;
        while (handedOn.isEmpty()) {
            add("s" + records++);
        }
        int leftFirst = handedOn.size();
        long openAfterLeaving = (added - carried(handedOn)) * DATA.length;
        int recordsAtFirstLeave = records;
        while (handedOn.size() == leftFirst) {
            add("s" + records++);
        }

        assertTrue("open " + openAfterLeaving + " bytes after the first leave",
            openAfterLeaving <= ShardAggregator.OPEN_BYTES_AFTER_SEALING);
        long between = (long) (records - recordsAtFirstLeave) * DATA.length;
        assertTrue(between + " bytes of records between two leaves",
            between >= 0.9 * (ShardAggregator.MAX_OPEN_BYTES - ShardAggregator.OPEN_BYTES_AFTER_SEALING));
    }

    @Test
    public void nearTheCapAnAggregateLeavesAtTheEdgeOfAPayloadUnitNotJustPastIt() {
        byte[] row = new byte[1_000];
        addRoundRobin(row, 0, 650, 60); // 16 MiB over 650 aggregates: the cap at about 25.8 KB each, just past a unit

        List<Integer> sizes = handedOn.stream().map(sealed -> sealed.sent().data().length
            + KinesisRecord.AGGREGATE_PARTITION_KEY.length()).toList();
        assertTrue("the cap was reached", !sizes.isEmpty());
        for (int size : sizes) {
            int intoLastUnit = size % ShardAggregator.PAYLOAD_UNIT_BYTES;
            assertTrue(size + " bytes: billed a unit for the " + intoLastUnit + " past the edge",
                intoLastUnit == 0 || intoLastUnit > row.length + 100);
        }
    }

    @Test
    public void whereTheCapCannotBindAggregatesFillPastAUnitNearIt() {
        byte[] row = new byte[1_000];
        // 320 full aggregates stay under the cap; 300 nearly full put the task past the quarter cap's mark
        // while the other 20 cross their first unit's edge
        addRoundRobin(row, 0, 300, 49);
        addRoundRobin(row, 300, 320, 40);

        assertEquals("nothing sealed: every aggregate under its limit, the task under its cap", List.of(), handedOn);
    }

    private void addRoundRobin(byte[] row, int fromStream, int toStream, int rounds) {
        for (int round = 0; round < rounds; round++) {
            for (int stream = fromStream; stream < toStream; stream++) {
                added++;
                KinesisRecord record = new KinesisRecord("s" + stream, "key-" + added, null, row);
                aggregator.add(new TaskRecord(record, added, row.length), handedOn::add);
            }
        }
    }

    @Test
    public void withThousandsOfTargetsAnAggregateStaysOpenForProportionallyMoreLooks() {
        int targets = 10 * ShardAggregator.AGED_SEALS_PER_LOOK;
        for (int stream = 0; stream < targets; stream++) {
            add("s" + stream);
        }
        int looks = 0;
        while (handedOn.isEmpty()) {
            aggregator.sealAged(handedOn::add);
            looks++;
        }

        assertEquals("looks before the first aggregate left by age", 10 + 1, looks);
        assertEquals("all left at that look", targets, handedOn.size());
    }

    @Test
    public void theBuildersKeepAtMostTheirCapForReuseBesideWhatTheOpenAggregatesHold() {
        long most = 0;
        for (int stream = 0; stream < 3_000; stream++) {
            for (int row = 0; row < 6; row++) { // five fill an aggregate of 51,200 bytes, the sixth starts the next
                add("s" + stream);
                most = Math.max(most, aggregator.builderBytes());
            }
        }

        assertTrue("the builders took " + most + " bytes", most <= ShardAggregator.MAX_BUILDER_BYTES
            + 2 * ShardAggregator.MAX_OPEN_BYTES);
        aggregator.sealAll(handedOn::add);
        assertEquals(0, aggregator.builderBytes());
        assertEquals(added, carried(handedOn));
    }

    @Test
    public void withFewTargetsAnAggregateLeavesAtTheLookAfterTheOneItWasOpenedIn() {
        add("one");
        add("two");
        aggregator.sealAged(handedOn::add);
        assertTrue(handedOn.isEmpty());

        aggregator.sealAged(handedOn::add);

        assertEquals(2, handedOn.size());
    }

    @Test
    public void everyRecordLeavesOnceWithItsAggregatesKeyAndSealAllSendsTheRest() {
        for (int i = 0; i < 12; i++) {
            add("one");
        }
        assertEquals("five records of 10 KB fill an aggregate of 51,200 bytes", List.of(5, 5),
            handedOn.stream().map(KplRecord::count).toList());

        aggregator.sealAll(handedOn::add);

        assertEquals(added, carried(handedOn));
        for (KplRecord record : handedOn) {
            assertEquals(1, record.carried().stream().map(r -> r.record().partitionKey()).distinct().count());
            assertEquals("sink-chosen keys route anywhere", null, record.targetShard());
        }
    }

    @Test
    public void anOutstandingAggregateKeepsRowNumbersOnlyAndReadsItsRecordsBackInOrder() {
        for (long row = 1; row <= 3; row++) {
            byte[] data = ("row " + row).getBytes(StandardCharsets.UTF_8);
            aggregator.add(new TaskRecord(new KinesisRecord("s", "key-" + row, null, data), row, 10), handedOn::add);
        }
        aggregator.sealAll(handedOn::add);

        KplRecord aggregate = handedOn.get(0);
        assertEquals("the room it holds is what its records reserved", 30, aggregate.bytes());
        List<TaskRecord> carried = aggregate.carried();
        assertEquals(List.of(1L, 2L, 3L), carried.stream().map(TaskRecord::rowNumber).toList());
        assertEquals(List.of("row 1", "row 2", "row 3"),
            carried.stream().map(r -> new String(r.record().data(), StandardCharsets.UTF_8)).toList());
        for (TaskRecord record : carried) {
            assertEquals("s", record.record().stream());
            assertEquals("sink-chosen keys: the first record's key", "key-1", record.record().partitionKey());
        }
    }

    @Test
    public void anAggregateOfOneKeyTheSinkChoseWaitsInTheLaneOfTheShardTheKeyRoutesTo() {
        ShardMaps oneShard = new ShardMaps(new FakeLister(System::nanoTime), System::nanoTime);
        ShardAggregator constant = new ShardAggregator(oneShard, 100_000, 16L << 20, 51_200, true, false,
            new RowStreams(DESCRIBED, "look", System::nanoTime));
        for (long row = 1; row <= 3; row++) {
            constant.add(new TaskRecord(new KinesisRecord("s", "the-default-partition", null, DATA), row,
                DATA.length + 21), handedOn::add);
        }
        constant.sealAll(handedOn::add);

        KplRecord aggregate = handedOn.get(0);
        assertEquals(3, aggregate.count());
        assertNull("it may be stored in any shard", aggregate.targetShard());
        assertEquals("every producer writing the key budgets its one shard's drain: FakeLister's one shard",
            "shardId-0", aggregate.lane().shard());
    }

    @Test
    public void aStreamThatCannotBeListedStillAggregatesOneSinkChosenKeyInTheStreamsLane() {
        ShardAggregator constant = new ShardAggregator(UNLISTABLE, 100_000, 16L << 20, 51_200, true, false,
            new RowStreams(DESCRIBED, "look", System::nanoTime));
        for (long row = 1; row <= 6; row++) {
            constant.add(new TaskRecord(new KinesisRecord("s", "0", null, DATA), row, DATA.length + 1), handedOn::add);
            if (row == 3) {
                constant.sealAll(handedOn::add); // its lane is looked up, and not found
            }
        }
        constant.sealAll(handedOn::add);

        assertEquals(List.of(3, 3), handedOn.stream().map(KplRecord::count).toList());
        assertNull(handedOn.get(1).lane().shard());
    }

    @Test
    public void randomKeysWaitInTheStreamsLane() {
        add("s");
        add("s");
        aggregator.sealAll(handedOn::add);

        assertNull("spread over the stream, and never listed", handedOn.get(0).lane().shard());
    }

    @Test
    public void anAggregateCarriesNoMoreRecordsOrBytesThanTheQueueCapsAllow() {
        ShardAggregator capped = new ShardAggregator(NO_LISTING, 3, 25, 51_200, true, true,
            new RowStreams(DESCRIBED, "look", System::nanoTime));
        for (long row = 1; row <= 8; row++) {
            byte[] data = new byte[row <= 6 ? 1 : 20];
            capped.add(new TaskRecord(new KinesisRecord("s", "k", null, data), row, data.length + 1), handedOn::add);
        }
        capped.sealAll(handedOn::add);

        assertEquals("3 by count, 3 by count, then 20 + 2 + 21 bytes over 25", List.of(3, 3, 1, 1),
            handedOn.stream().map(KplRecord::count).toList());
    }

    private void add(String stream) {
        added++;
        KinesisRecord record = new KinesisRecord(stream, "key-" + added, null, DATA);
        aggregator.add(new TaskRecord(record, added, DATA.length), handedOn::add);
    }

    private static long carried(List<KplRecord> records) {
        return records.stream().mapToLong(KplRecord::count).sum();
    }
}
