package io.asymnvm.examples.appbench;

/** How one application transaction ended. */
public enum Outcome {
    /** Committed (or, read-only, found what it looked for). */
    OK,
    /** Read-only and found no row: a legal outcome of the mix (TATP's lookups of absent rows). */
    NOT_FOUND,
    /** Aborted by the application's own rule (a constraint, insufficient funds): nothing was written. */
    USER_ABORT
}
