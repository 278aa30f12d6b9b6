package sparkkpl.config;

/** The choices of option {@code recordId}: whether each record's data starts with an id naming it. */
public enum RecordId {
    NONE,
    /** The record-id header before the data, the same when a task is retried. */
    PREFIX
}
