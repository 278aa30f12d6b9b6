package sparkkpl.aggregation;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.Test;
import sparkkpl.controlplane.FakeLister;
import sparkkpl.controlplane.RowStreams;
import sparkkpl.controlplane.ShardMaps;
import sparkkpl.kinesis.KinesisRecord;
import sparkkpl.kinesis.StreamDescription;
import sparkkpl.producer.KplRecord;
import sparkkpl.producer.TaskRecord;

/** With aggregation=kpl, each record goes alone, in the lane of the shard its key routes to. */
public class ShardRoutingTest {
    private static final byte[] DATA = new byte[100];
    private static final Map<String, StreamDescription> DESCRIBED =
        Map.of("s", new StreamDescription("s", null, null, StreamDescription.DEFAULT_MAX_RECORD_KIB));

    private final FakeLister lister = new FakeLister(System::nanoTime);
    private final ShardMaps maps = new ShardMaps(lister, System::nanoTime);
    private final List<KplRecord> handedOn = new ArrayList<>();

    @Test
    public void aRecordWithTheUsersKeyGoesAloneInItsShardsLane() {
        new ShardRouting(maps, false, new RowStreams(DESCRIBED, "look", System::nanoTime))
            .add(new TaskRecord(new KinesisRecord("s", "hot-key", null, DATA), 1, 107), handedOn::add);

        KplRecord record = handedOn.get(0);
        assertEquals(1, record.count());
        assertNull("the KPL checks where it stores a record of its own", record.targetShard());
        assertEquals("FakeLister's one shard", "shardId-0", record.lane().shard());
    }

    @Test
    public void randomKeysSpreadOverTheStreamsLaneWithoutAListing() {
        new ShardRouting(maps, true, new RowStreams(DESCRIBED, "look", System::nanoTime))
            .add(new TaskRecord(new KinesisRecord("s", "random-key", null, DATA), 1, 110), handedOn::add);

        assertNull(handedOn.get(0).lane().shard());
        assertEquals(0, lister.listings.get());
    }

    @Test
    public void aConstantKeyGoesInItsShardsLane() {
        new ShardRouting(maps, false, new RowStreams(DESCRIBED, "look", System::nanoTime))
            .add(new TaskRecord(new KinesisRecord("s", "the-default-partition", null, DATA), 1, 121), handedOn::add);

        assertEquals("every producer writing the key budgets its one shard's drain", "shardId-0",
            handedOn.get(0).lane().shard());
    }
}
