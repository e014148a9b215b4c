package io.asymnvm.structures;

/**
 * Receives entries during an iteration inside a transaction.
 *
 * @param <K> key type
 * @param <V> value type
 */
@FunctionalInterface
public interface EntryVisitor<K, V> {
    /** Returns whether to continue with the next entry. */
    boolean visit(K key, V value);
}
