package io.asymnvm.structures;

import java.util.function.BiFunction;

/**
 * A persistent map of non-null keys to non-null values, living in persistent memory at a root address.
 *
 * <p><b>Threading and transactions.</b> Every method must be called inside a
 * {@link io.asymnvm.frontend.PersistentTransaction} method (it uses
 * {@link io.asymnvm.frontend.Transaction#current()}); the object itself holds only the root address and the
 * codecs, so one instance may be shared by threads. Operations are deterministic functions of the persistent
 * state and their arguments, as re-execution requires; so must be the functions passed to
 * {@link #compute(Object, BiFunction)}.
 *
 * <p><b>Bad input.</b> A null key or value is a {@link NullPointerException}, a key or value beyond the
 * structure's limits an {@link IllegalArgumentException}, both thrown before anything is written, so that the
 * structure is unchanged even if the caller catches the exception and continues its transaction.
 *
 * @param <K> key type
 * @param <V> value type
 */
public interface PersistentMap<K, V> {

    /** The address of this structure's root block. */
    long rootAddress();

    /** The value of {@code key}, or null. */
    V get(K key);

    boolean containsKey(K key);

    /** Associates {@code value} with {@code key}; returns the previous value or null. */
    V put(K key, V value);

    /** Associates {@code value} with {@code key} unless it has a value; returns the existing value or null. */
    V putIfAbsent(K key, V value);

    /** Removes {@code key}; returns its previous value or null. */
    V remove(K key);

    /**
     * Replaces the value of {@code key} by {@code function(key, current)} ({@code current} null when absent); a
     * null result removes the key. Returns the new value or null. The function must be deterministic (it runs
     * again whenever the transaction does).
     */
    V compute(K key, BiFunction<? super K, ? super V, ? extends V> function);

    /** Number of entries. */
    long size();

    default boolean isEmpty() {
        return size() == 0;
    }

    /**
     * Visits every entry (B+tree: ascending key order; hash map: bucket order) until the visitor returns false.
     * One transaction sees a consistent snapshot; for very large maps prefer the chunked iterations of the
     * implementations, since a page miss restarts the whole transaction.
     */
    void forEach(EntryVisitor<? super K, ? super V> visitor);

    /**
     * Checks every structural invariant (ordering, counts, links, no cycles, no shared nodes, node pool
     * accounting) and that every key and value decodes; a {@link StructureCorruptException} naming the first
     * violation. Reads the whole structure in one transaction.
     */
    void verify();
}
