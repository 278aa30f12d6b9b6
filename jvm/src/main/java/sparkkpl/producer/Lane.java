package sparkkpl.producer;

/**
 * Where a KPL record's bytes land, as far as its task knows: one shard of a stream, or somewhere in the
 * stream ({@code shard} null: the stream places records itself, or the task cannot list it). Each lane of a
 * producer has a budget of its own ({@link OutstandingLimit}), since a shard takes what it takes whatever
 * its neighbours do: a budget measured over the whole stream lets a hot shard's backlog grow to the queue limits.
 *
 * @param shard the shard id, or null for the stream as a whole
 */
public record Lane(String stream, String shard) {
    /** Whether the lane is one shard, whose limits bound what it drains. */
    boolean isShard() {
        return shard != null;
    }
}
