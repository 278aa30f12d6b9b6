package sparkkpl.producer;

/** One user record as the KPL takes it; {@code explicitHashKey} may be null. */
public record KinesisRecord(String stream, String partitionKey, String explicitHashKey, byte[] data) {}
