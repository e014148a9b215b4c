/**
 * The transaction engine, split by role (issue 8 "Shape"): {@code TransactionEngine} holds the shared state and the
 * public calls; {@code Executor} runs method bodies with retry on misses (read-only calls without the lock through
 * {@code LocklessReads}, validated against the page cache's change sequence); {@code CommitPipeline} logs
 * semantically and runs group commit; {@code RedoShipperAgent} ships redo and polls checkpoints on the agent's
 * duty cycle; {@code Recovery} re-executes and reconnects; {@code PageFetcher}, {@code SlabGrants},
 * {@code CoherenceCheck} and {@code MirrorFailover} do page misses, slab grants, the coherence check mode and SYNC
 * mirrors with failover. Also the {@code @PersistentTransaction} method registry and argument codec.
 */
package io.asymnvm.frontend.tx;
