package sparkkpl.spark;

import sparkkpl.util.ErrorTag;

/**
 * The write's stream was deleted and created again under its name while the write ran. Aggregates
 * built for the old stream's shards may have been stored in the new one, whose shard ids start over
 * with other ranges, where a KCL consumer drops the records outside its shard's range; Kinesis
 * reports them as written, so the sink cannot tell which. The write fails rather than report success.
 */
public final class StreamRecreatedException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    StreamRecreatedException(String stream, String created, String writeName) {
        super("Stream '" + stream + "' was deleted and created again while the write ran (the stream the write "
            + "began on was created at " + created + "): aggregated records may have been stored in the new stream "
            + "under shards of the old one, where a KCL consumer drops them. Run the write again"
            + (writeName == null ? "" : " (its writeName '" + writeName + "' keeps the record ids, so a consumer "
                + "can drop the duplicates)") + "; a streaming query runs the micro-batch again when restarted."
            + ErrorTag.Kind.STREAM_RECREATED.of(stream));
    }
}
