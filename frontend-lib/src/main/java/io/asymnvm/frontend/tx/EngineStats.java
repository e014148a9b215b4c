package io.asymnvm.frontend.tx;

/**
 * What the transaction engine did, by purpose, so that round trips can be attributed: {@code commitRoundTrips}
 * are the waits of committing (and read-only) transactions for durability; fetches, slab grants and background
 * polls are counted apart. All counts are exact; {@code slabGrants}
 * counts slabs granted to this incarnation, and
 * {@code verifyRoundTrips} the reads of the coherence check mode (0 unless it is on), {@code slabReturns} the
 * empty slabs this incarnation gave back to the backend.
 *
 * <p>Failover (SYNC mirrors, issue 9): {@code failovers} counts the times this frontend resumed on a promoted
 * mirror; for the last one, {@code failoverDetectMillis} is the time from the first failed operation on the old
 * backend to giving up on it (the reconnect timeout), and {@code failoverResumeMillis} the time from then to
 * serving again on the promoted mirror (finding it, re-posting the retained semantic records, re-attaching and
 * re-executing what it had not applied). The other counts start again at a failover (they describe the engine
 * serving now).
 *
 * <p>Lockless reads (issue 8, {@link LocklessReads}): {@code locklessAttempts} counts the attempts of read-only
 * calls run without the execution lock, {@code locklessConflicts} those abandoned because the page cache changed
 * under them, {@code locklessFallbacks} the calls that then ran under the lock after too many conflicts, and
 * {@code locklessWrites} the calls of a method that had run read-only and wrote this time (run again under the lock
 * and logged once). Every re-run, lockless or not, is also in {@code retries}.
 *
 * <p>Optimistic writers (issue 8 goal 2, {@link OptimisticWriters}): {@code optimisticAttempts} counts the
 * attempts of logged calls whose body ran without the execution lock, {@code optimisticConflicts} those run again
 * because a page they read changed (at a read or at the commit's validation), and {@code optimisticFallbacks} the
 * calls that then ran under the lock (too many conflicts, or an allocation or root change).
 */
public record EngineStats(long commits, long readOnly, long aborts, long retries, long commitRoundTrips,
                          long fetchRoundTrips, long controlRoundTrips, long backgroundRoundTrips,
                          long redoBatches, long reconnects, long lastTxId, long durableTxId, long appliedTxId,
                          long slabGrants, long verifyRoundTrips, long slabReturns,
                          long failovers, long failoverDetectMillis, long failoverResumeMillis,
                          long locklessAttempts, long locklessConflicts, long locklessFallbacks,
                          long locklessWrites, long optimisticAttempts, long optimisticConflicts,
                          long optimisticFallbacks) {

    /** Counts without optimistic writers (a difference of counts that ignores them). */
    public EngineStats(long commits, long readOnly, long aborts, long retries, long commitRoundTrips,
                       long fetchRoundTrips, long controlRoundTrips, long backgroundRoundTrips,
                       long redoBatches, long reconnects, long lastTxId, long durableTxId, long appliedTxId,
                       long slabGrants, long verifyRoundTrips, long slabReturns,
                       long failovers, long failoverDetectMillis, long failoverResumeMillis,
                       long locklessAttempts, long locklessConflicts, long locklessFallbacks,
                       long locklessWrites) {
        this(commits, readOnly, aborts, retries, commitRoundTrips, fetchRoundTrips, controlRoundTrips,
                backgroundRoundTrips, redoBatches, reconnects, lastTxId, durableTxId, appliedTxId, slabGrants,
                verifyRoundTrips, slabReturns, failovers, failoverDetectMillis, failoverResumeMillis,
                locklessAttempts, locklessConflicts, locklessFallbacks, locklessWrites, 0, 0, 0);
    }

    /** Optimistic-writer conflicts per committed or read-only transaction (0 when none ran). */
    public double conflictsPerTransaction() {
        long transactions = commits + readOnly;
        return transactions == 0 ? 0.0 : optimisticConflicts / (double) transactions;
    }

    /** Counts without lockless reads (an engine before issue 8, or a difference of counts that ignores them). */
    public EngineStats(long commits, long readOnly, long aborts, long retries, long commitRoundTrips,
                       long fetchRoundTrips, long controlRoundTrips, long backgroundRoundTrips,
                       long redoBatches, long reconnects, long lastTxId, long durableTxId, long appliedTxId,
                       long slabGrants, long verifyRoundTrips, long slabReturns,
                       long failovers, long failoverDetectMillis, long failoverResumeMillis) {
        this(commits, readOnly, aborts, retries, commitRoundTrips, fetchRoundTrips, controlRoundTrips,
                backgroundRoundTrips, redoBatches, reconnects, lastTxId, durableTxId, appliedTxId, slabGrants,
                verifyRoundTrips, slabReturns, failovers, failoverDetectMillis, failoverResumeMillis, 0, 0, 0, 0);
    }

    /**
     * Transactions run (committed, read-only or aborted) over the attempts they took: 1.0 when nothing ran twice.
     * 0 when no transaction ran.
     */
    public double runsPerTransaction() {
        long transactions = commits + readOnly + aborts;
        return transactions == 0 ? 0.0 : (transactions + retries) / (double) transactions;
    }

    /** Counts of a frontend that never failed over. */
    public EngineStats(long commits, long readOnly, long aborts, long retries, long commitRoundTrips,
                       long fetchRoundTrips, long controlRoundTrips, long backgroundRoundTrips,
                       long redoBatches, long reconnects, long lastTxId, long durableTxId, long appliedTxId,
                       long slabGrants, long verifyRoundTrips, long slabReturns) {
        this(commits, readOnly, aborts, retries, commitRoundTrips, fetchRoundTrips, controlRoundTrips,
                backgroundRoundTrips, redoBatches, reconnects, lastTxId, durableTxId, appliedTxId, slabGrants,
                verifyRoundTrips, slabReturns, 0, 0, 0, 0, 0, 0, 0);
    }

    /** The counts of {@code e} now (the engine's facade calls this; the counters stay on the engine). */
    static EngineStats of(TransactionEngine e) {
        return new EngineStats(e.commits.get(), e.readOnly.get() + e.readers.completed(), e.aborts.get(),
                e.retries.get(), e.commitRoundTrips.get(), e.fetchRoundTrips.get(), e.controlRoundTrips.get(),
                e.backgroundRoundTrips.get(), e.redoBatches.get(), e.reconnects.get(), e.posted.txId(),
                e.durableTxId, e.appliedTxId, e.slabGrants.get(), e.verifyReads.get(), e.slabReturns.returned(),
                e.failover.failovers(), e.failover.detectMillis(), e.failover.resumeMillis(),
                e.readers.attempts(), e.readers.conflicts(), e.readers.fallbacks(), e.readers.abandoned(),
                e.writers.attempts(), e.writers.conflicts(), e.writers.fallbacks());
    }
}
