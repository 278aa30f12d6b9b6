package sparkkpl.failures;


/** A row that cannot become a Kinesis record; carries what is known of it for the error or dead letter. */
public final class RowRejected extends Exception {
    private static final long serialVersionUID = 1L;
    private final transient FailedRecord failure;

    public RowRejected(FailedRecord failure) {
        super(failure.errorMessage(), null, false, false);
        this.failure = failure;
    }

    public FailedRecord failure() {
        return failure;
    }
}
