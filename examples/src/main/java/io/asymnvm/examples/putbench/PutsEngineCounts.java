package io.asymnvm.examples.putbench;

/**
 * The frontend's work during the measured phase: transactions committed, commit round trips waited, redo batches
 * shipped and transaction re-runs (EngineStats deltas), reported per put to show group commit and batching.
 */
record PutsEngineCounts(long commits, long commitRoundTrips, long redoBatches, long retries) {
    double per(long count, long of) {
        return of == 0 ? 0 : (double) count / of;
    }
}
