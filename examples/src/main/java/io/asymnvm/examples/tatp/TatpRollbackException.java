package io.asymnvm.examples.tatp;

/**
 * A TATP transaction that the specification rolls back (an update of an absent row, a call forwarding that exists
 * already or whose special facility does not): thrown before any write, so the transaction aborts and changes
 * nothing. Expected in the mix's normal run, hence without a stack trace.
 */
public final class TatpRollbackException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TatpRollbackException(String message) {
        super(message, null, false, false);
    }
}
