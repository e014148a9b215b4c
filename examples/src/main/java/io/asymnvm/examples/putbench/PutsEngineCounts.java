package io.asymnvm.examples.putbench;

/**
 * The frontend's work during the measured phase: transactions committed, commit waits (a caller waiting for a FLUSH
 * completion, its own or one it shares: EngineStats' {@code commitRoundTrips}), FLUSHes posted (the fabric's
 * counter: fewer than commits when group commit shares them), redo batches shipped and transaction re-runs.
 */
record PutsEngineCounts(long commits, long commitRoundTrips, long flushes, long redoBatches, long retries) {
    double per(long count, long of) {
        return of == 0 ? 0 : (double) count / of;
    }
}
