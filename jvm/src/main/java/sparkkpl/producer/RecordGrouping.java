package sparkkpl.producer;

import java.io.IOException;
import java.util.function.Consumer;

/**
 * How a task's records become the KPL's user records: one by one (the KPL aggregates), or grouped
 * into aggregates by the sink ({@code sparkkpl.aggregation.ShardAggregator}). Records a grouping
 * holds keep their room under the queue limit until it hands them on.
 */
public interface RecordGrouping {
    /** Each record is a KPL user record of its own. */
    RecordGrouping ONE_BY_ONE = new RecordGrouping() {
        @Override
        public void add(TaskRecord record, Consumer<KplRecord> ready) {
            ready.accept(KplRecord.alone(record));
        }

        @Override
        public void sealAll(Consumer<KplRecord> ready) {
        }
    };

    /**
     * Takes a record; hands on whatever is complete now.
     *
     * @throws IOException when the record cannot be placed (the stream's shards cannot be listed)
     */
    void add(TaskRecord record, Consumer<KplRecord> ready) throws IOException;

    /** Hands on everything it holds, complete or not: the task waits for acknowledgements next. */
    void sealAll(Consumer<KplRecord> ready);
}
