package sparkkpl.config;

/** The choices of option {@code ordering}: what order a key's rows reach their shard in. */
public enum Ordering {
    /** As Kinesis stores them: a retried record may land after later ones. */
    NONE,
    /** Each key's rows in the order the task that wrote them had them (docs/delivery.md, "Order per key"). */
    KEY
}
