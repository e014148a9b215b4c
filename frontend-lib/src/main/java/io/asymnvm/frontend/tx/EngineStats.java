package io.asymnvm.frontend.tx;

/**
 * What the transaction engine did, by purpose, so that round trips can be attributed: {@code commitRoundTrips}
 * are the waits of committing (and read-only) transactions for durability; fetches, slab grants and background
 * polls are counted apart. All counts are exact; {@code slabGrants}
 * counts slabs granted to this incarnation, and
 * {@code verifyRoundTrips} the reads of the coherence check mode (0 unless it is on), {@code slabReturns} the
 * empty slabs this incarnation gave back to the backend.
 */
public record EngineStats(long commits, long readOnly, long aborts, long retries, long commitRoundTrips,
                          long fetchRoundTrips, long controlRoundTrips, long backgroundRoundTrips,
                          long redoBatches, long reconnects, long lastTxId, long durableTxId, long appliedTxId,
                          long slabGrants, long verifyRoundTrips, long slabReturns) {
}
