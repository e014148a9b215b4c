/**
 * Persistent data structures built on frontend transactions: {@link io.asymnvm.structures.PersistentBTree} (an
 * ordered map) and {@link io.asymnvm.structures.PersistentHashMap}, both {@link io.asymnvm.structures.PersistentMap}s
 * opened on a root address whose self-describing header ({@link io.asymnvm.structures.StructureHeader}) names
 * the type and codecs. Every operation runs inside the caller's persistent transaction, so several structures
 * can change atomically together.
 */
package io.asymnvm.structures;
