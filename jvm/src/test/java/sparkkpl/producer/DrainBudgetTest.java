package sparkkpl.producer;

import static org.junit.Assert.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** A lane's outstanding budget on a clock of its own: what it may hold follows what Kinesis acknowledges of it. */
public class DrainBudgetTest {
    private static final long MIB = 1 << 20;
    private static final long CAP_RECORDS = 100_000;
    private static final long CAP_BYTES = 16 * MIB;
    /** The default RecordTtl: a target wait of 2 s. */
    private static final long TTL_MS = 30_000;
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    /** An answer that waited in a queue, as at a shard's quota: half the target wait after its add. */
    private static final long QUEUED = SECOND;
    /** An answer that waited in none: a KPL buffer's time and a round trip, within an eighth of the target wait. */
    private static final long PROMPT = SECOND / 4;
    private static final DrainBudget.Policy POLICY = DrainBudget.Policy.following(CAP_RECORDS, CAP_BYTES, TTL_MS);
    private static final Lane SHARD = new Lane("s", "shardId-000000000000");

    private long now = 5 * SECOND; // any origin
    private final DrainBudget budget = busy(POLICY.newLane());

    private DrainBudget busy(DrainBudget lane) {
        lane.busy(now);
        return lane;
    }

    @Test
    public void aLaneStartsAtAboutATenthOfAShardsSecond() {
        assertEquals(CAP_RECORDS / 1024, budget.records()); // 97 of a shard's 1,000 records a second
        assertEquals(64 << 10, budget.bytes()); // 64 KiB of its 1 MiB
    }

    /**
     * Before its first measurement a lane grows by what Kinesis acknowledges while a task waits: 32 producers
     * on one shard grow together by what the shard drains, not each by a start of its own.
     */
    @Test
    public void untilItsFirstMeasurementItGrowsByWhatIsAcknowledgedWhileATaskWaits() {
        budget.bound(now);
        budget.acknowledged(97, 16 << 10, QUEUED, false, true, now + SECOND / 10);
        budget.acknowledged(50, 1_000, QUEUED, false, false, now + SECOND / 5); // nobody waited: not bound by the budget

        assertEquals(2 * 97, budget.records());
        assertEquals(80 << 10, budget.bytes());
    }

    /** An unthrottled shard answers within a fraction of the target wait: the lane grows fourfold a round trip. */
    @Test
    public void promptAnswersGrowItThreeTimesWhatTheyAcknowledge() {
        budget.bound(now);
        budget.acknowledged(97, 16 << 10, PROMPT, false, true, now + SECOND / 10);

        assertEquals(4 * 97, budget.records());
        assertEquals(112 << 10, budget.bytes());
    }

    /** A throttled attempt says the shard is at its quota, however soon the KPL's retry was answered. */
    @Test
    public void aThrottledAnswerGrowsItByWhatItAcknowledgesAlone() {
        budget.bound(now);
        budget.acknowledged(97, 16 << 10, PROMPT, true, true, now + SECOND / 10);

        assertEquals(2 * 97, budget.records());
        assertEquals(80 << 10, budget.bytes());
    }

    @Test
    public void slowStartEndsWithTheFirstMeasurement() {
        drainPerSecond(10, 10_000, true, 1); // one producer of a hundred on a shard at its quota
        budget.acknowledged(10, 10_000, PROMPT, false, true, now);

        assertEquals(20, budget.records());
        assertEquals(20_000, budget.bytes());
    }

    @Test
    public void whileTasksWaitTheBudgetIsTheTargetWaitOfWhatKinesisAcknowledges() {
        budget.bound(now);
        drainPerSecond(1_000, 1_024_000, true, 1); // one shard at its quota: 1,000 records of 1 KiB a second

        assertEquals(2_000, budget.records());
        assertEquals(2_048_000, budget.bytes());
    }

    @Test
    public void aSlowerDrainMovesItHalfwayEachWindow() {
        drainPerSecond(4_000, 4_096_000, true, 1);
        drainPerSecond(1_000, 1_024_000, true, 1);

        assertEquals(2 * 2_500, budget.records());
        assertEquals(2 * 2_560_000, budget.bytes());
    }

    @Test
    public void aDrainNobodyWaitedForLeavesItAsItWas() {
        drainPerSecond(10, 10_000, false, 3); // the tasks add slowly: that is not what Kinesis can take

        assertEquals(CAP_RECORDS / 1024, budget.records());
        assertEquals(64 << 10, budget.bytes());
    }

    @Test
    public void anUnthrottledShardBringsItToTheCapsAndNoFurther() {
        drainPerSecond(80_000, 80 * MIB, true, 1);

        assertEquals(CAP_RECORDS, budget.records());
        assertEquals(CAP_BYTES, budget.bytes());
    }

    @Test
    public void nothingAcknowledgedWhileTasksWaitLeavesTheFloor() {
        budget.bound(now);
        now += 10 * SECOND; // an outage
        budget.acknowledged(0, 0, QUEUED, false, true, now);

        assertEquals(CAP_RECORDS / 8192, budget.records()); // 12 records and 2 KiB: the floor
        assertEquals(2 << 10, budget.bytes());
    }

    /**
     * A streaming query's micro-batch drains half a second at 1 MB/s, then its trigger leaves the lane idle
     * for 10 s, then the next batch drains half a second more: measured over its busy time the rate is 1 MB/s,
     * where the wall clock would say 1/11 of it and shrink the budget to the floor.
     */
    @Test
    public void idleTimeBetweenBatchesIsLeftOutOfTheRate() {
        budget.bound(now);
        acknowledgeOverHalfASecond();
        budget.idle(now);
        now += 10 * SECOND;
        budget.busy(now);
        budget.bound(now);
        acknowledgeOverHalfASecond();
        budget.acknowledged(0, 0, QUEUED, false, true, now);

        assertEquals(2_000_000, budget.bytes());
    }

    private void acknowledgeOverHalfASecond() {
        for (int i = 0; i < 5; i++) {
            budget.acknowledged(100, 100_000, QUEUED, false, true, now);
            now += SECOND / 10;
        }
    }

    @Test
    public void theTargetWaitIsAFifteenthOfRecordTtlAndAtLeastOneSecond() {
        DrainBudget longTtl = busy(DrainBudget.Policy.following(CAP_RECORDS, CAP_BYTES, 150_000).newLane());
        DrainBudget shortTtl = busy(DrainBudget.Policy.following(CAP_RECORDS, CAP_BYTES, 2_000).newLane());
        for (DrainBudget each : new DrainBudget[] {longTtl, shortTtl}) {
            each.bound(now);
            each.acknowledged(1_000, 1_000_000, QUEUED, false, true, now + SECOND / 2);
            each.acknowledged(0, 0, QUEUED, false, true, now + SECOND);
        }

        assertEquals("10 s", 10_000_000, longTtl.bytes());
        assertEquals("1 s, not 133 ms", 1_000_000, shortTtl.bytes());
    }

    @Test
    public void queueLimitsOnlyIgnoreTheDrain() {
        DrainBudget fixed = busy(DrainBudget.Policy.queueLimitsOnly(2, 100).newLane());
        fixed.bound(0);
        fixed.acknowledged(1, 1, QUEUED, false, true, 10 * SECOND);
        fixed.acknowledged(0, 0, QUEUED, false, true, 20 * SECOND);

        assertEquals(2, fixed.records());
        assertEquals(100, fixed.bytes());
    }

    /** Acknowledgements spread over {@code seconds} whole windows, each closed by an empty one at its end. */
    private void drainPerSecond(long records, long bytes, boolean waiting, int seconds) {
        for (int second = 0; second < seconds; second++) {
            now += SECOND / 20;
            for (int tenth = 0; tenth < 10; tenth++) {
                budget.acknowledged(records / 10, bytes / 10, QUEUED, false, waiting, now);
                now += SECOND / 10;
            }
            now -= SECOND / 20;
            budget.acknowledged(0, 0, QUEUED, false, waiting, now);
        }
    }
}
