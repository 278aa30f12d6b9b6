package sparkkpl.config;

/** The choices of option {@code aggregation}: who builds the KPL's aggregated records. */
public enum Aggregation {
    /** The task, per target shard; the KPL sends each aggregate as one record. */
    EXECUTOR,
    /** The KPL, from one user record per row. */
    KPL
}
