package sparkkpl.producer;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * How a task's records become the KPL's user records: one by one (the KPL aggregates), or grouped
 * into aggregates by the sink ({@code sparkkpl.aggregation.ShardAggregator}). Records a grouping
 * still holds take no room under the queue limit: room is reserved for a KPL record once it is
 * complete, so a task waiting for room never has to cut its open aggregates short.
 */
public interface RecordGrouping {
    /** Each record is a KPL user record of its own. */
    RecordGrouping ONE_BY_ONE = new EachAlone() {
        @Override
        public void add(TaskRecord record, Consumer<KplRecord> ready) {
            ready.accept(KplRecord.alone(record));
        }
    };

    /**
     * A grouping that hands every record on alone as it comes: it holds nothing to seal or drop, and the
     * KPL checks where it stores each record itself, so none is ever misplaced.
     */
    abstract class EachAlone implements RecordGrouping {
        @Override
        public final void sealAll(Consumer<KplRecord> ready) {
        }

        @Override
        public final void sealAged(Consumer<KplRecord> ready) {
        }

        @Override
        public final void clear() {
        }

        @Override
        public final boolean keptWhereStored(KplRecord record, String storedIn, boolean streamWentMissing) {
            return true;
        }
    }

    /** Takes a record; hands on whatever is complete now. */
    void add(TaskRecord record, Consumer<KplRecord> ready);

    /** Hands on everything it holds, complete or not: the task waits for acknowledgements next. */
    void sealAll(Consumer<KplRecord> ready);

    /**
     * A periodic look at what it holds: hands on what it already held at the previous look, so that
     * a record bound for a shard the task's other rows rarely go to waits about as long as the KPL
     * would buffer it, not until the task ends.
     */
    void sealAged(Consumer<KplRecord> ready);

    /** Drops what it holds: the task failed, and nothing of it will be sent. */
    void clear();

    /**
     * Whether a consumer that checks hash ranges (the KCL) keeps every record of {@code record},
     * which Kinesis stored in shard {@code storedIn} rather than in the shard it was built for (the
     * stream was resharded meanwhile), or stored after the stream went missing ({@code
     * streamWentMissing}: it may be another stream of the same name now). When not, its records must
     * be sent again.
     *
     * @throws IOException when the stream's shards cannot be listed again
     */
    boolean keptWhereStored(KplRecord record, String storedIn, boolean streamWentMissing) throws IOException;
}
