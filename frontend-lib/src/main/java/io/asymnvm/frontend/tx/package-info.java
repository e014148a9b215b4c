/**
 * The transaction engine: execution under the lock with retry on misses, read-only calls without the lock
 * (validated against the page cache's change sequence), semantic logging and group commit, redo shipping, reconnect
 * with re-posting, and the {@code @PersistentTransaction} method registry and codec.
 */
package io.asymnvm.frontend.tx;
