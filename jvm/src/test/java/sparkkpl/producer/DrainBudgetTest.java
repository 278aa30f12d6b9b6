package sparkkpl.producer;

import static org.junit.Assert.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** The outstanding budget on a clock of its own: what a producer may hold follows what Kinesis acknowledges. */
public class DrainBudgetTest {
    private static final long MIB = 1 << 20;
    private static final long CAP_RECORDS = 100_000;
    private static final long CAP_BYTES = 16 * MIB;
    /** The default RecordTtl: a target wait of 2 s. */
    private static final long TTL_MS = 30_000;
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private long now = 5 * SECOND; // any origin
    private final DrainBudget budget = DrainBudget.following(CAP_RECORDS, CAP_BYTES, TTL_MS, now);

    @Test
    public void aNewProducerStartsAtASixteenthOfItsCaps() {
        assertEquals(CAP_RECORDS / 16, budget.records());
        assertEquals(MIB, budget.bytes());
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
        drainPerSecond(4_000, 4_096_000, true, 1); // four shards
        drainPerSecond(1_000, 1_024_000, true, 1); // then one

        assertEquals(2 * 2_500, budget.records());
        assertEquals(2 * 2_560_000, budget.bytes());
    }

    @Test
    public void aDrainNobodyWaitedForLeavesItAsItWas() {
        drainPerSecond(10, 10_000, false, 3); // the tasks add slowly: that is not what Kinesis can take

        assertEquals(CAP_RECORDS / 16, budget.records());
        assertEquals(MIB, budget.bytes());
    }

    @Test
    public void anUnthrottledStreamBringsItToTheCapsAndNoFurther() {
        drainPerSecond(80_000, 80 * MIB, true, 1);

        assertEquals(CAP_RECORDS, budget.records());
        assertEquals(CAP_BYTES, budget.bytes());
    }

    @Test
    public void nothingAcknowledgedWhileTasksWaitLeavesTheFloor() {
        budget.bound(now);
        now += 10 * SECOND; // an outage
        budget.acknowledged(0, 0, true, now);

        assertEquals(CAP_RECORDS / 64, budget.records());
        assertEquals(CAP_BYTES / 64, budget.bytes());
    }

    @Test
    public void theTargetWaitIsAFifteenthOfRecordTtlAndAtLeastOneSecond() {
        DrainBudget longTtl = DrainBudget.following(CAP_RECORDS, CAP_BYTES, 150_000, now);
        DrainBudget shortTtl = DrainBudget.following(CAP_RECORDS, CAP_BYTES, 2_000, now);
        for (DrainBudget each : new DrainBudget[] {longTtl, shortTtl}) {
            each.bound(now);
            each.acknowledged(1_000, 1_000_000, true, now + SECOND / 2);
            each.acknowledged(0, 0, true, now + SECOND);
        }

        assertEquals("10 s", 10_000_000, longTtl.bytes());
        assertEquals("1 s, not 133 ms", 1_000_000, shortTtl.bytes());
    }

    @Test
    public void fixedCapsIgnoreTheDrain() {
        DrainBudget fixed = DrainBudget.fixed(2, 100);
        fixed.bound(0);
        fixed.acknowledged(1, 1, true, 10 * SECOND);
        fixed.acknowledged(0, 0, true, 20 * SECOND);

        assertEquals(2, fixed.records());
        assertEquals(100, fixed.bytes());
    }

    /** Acknowledgements spread over {@code seconds} whole windows, each closed by an empty one at its end. */
    private void drainPerSecond(long records, long bytes, boolean waiting, int seconds) {
        for (int second = 0; second < seconds; second++) {
            now += SECOND / 20;
            for (int tenth = 0; tenth < 10; tenth++) {
                budget.acknowledged(records / 10, bytes / 10, waiting, now);
                now += SECOND / 10;
            }
            now -= SECOND / 20;
            budget.acknowledged(0, 0, waiting, now);
        }
    }
}
