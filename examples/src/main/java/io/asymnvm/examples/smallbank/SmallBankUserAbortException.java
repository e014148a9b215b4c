package io.asymnvm.examples.smallbank;

/**
 * A SmallBank transaction aborted by the benchmark's own rules (an unknown customer, a payment larger than the
 * checking balance, savings that would go negative): thrown before any write, so nothing changes. Expected in the
 * mix's normal run, hence without a stack trace.
 */
public final class SmallBankUserAbortException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SmallBankUserAbortException(String message) {
        super(message, null, false, false);
    }
}
