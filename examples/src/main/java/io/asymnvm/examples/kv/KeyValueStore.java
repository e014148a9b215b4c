package io.asymnvm.examples.kv;

import io.asymnvm.frontend.PersistentTransaction;

import java.util.List;
import java.util.Map;

/**
 * A string key-value store in persistent memory. Use it through
 * {@code nvm.transactional(KeyValueStore.class, new KeyValueStoreImpl(nvm, kind, name))}: every method is then
 * one persistent transaction, and a mutating call returns only once it is durable.
 *
 * <p>Keys are at most 1024 UTF-8 bytes, values at most 64 KiB; null keys or values and larger ones are refused
 * with an exception before anything is written (the transaction aborts, nothing changes). A batch call is one
 * transaction: all of it happens or none of it; keep batches to a few hundred small entries (one transaction's
 * redo is bounded).
 */
public interface KeyValueStore {
    /** The largest {@code limit} one {@link #scan} call accepts. */
    int MAX_SCAN_LIMIT = 10_000;

    /** Associates {@code value} with {@code key}; returns the previous value or null. */
    @PersistentTransaction
    String put(String key, String value);

    /** Removes {@code key}; returns the value it had, or null if it was absent (then nothing changes). */
    @PersistentTransaction
    String delete(String key);

    /**
     * Puts {@code keys[i] -> values[i]} for every {@code i}, in order (a later duplicate key wins), atomically.
     *
     * @throws IllegalArgumentException if the arrays differ in length, or for a key or value beyond the limits
     */
    @PersistentTransaction
    void putAll(String[] keys, String[] values);

    /** The value of {@code key}, or null. */
    @PersistentTransaction(readOnly = true)
    String get(String key);

    /** The values of {@code keys} (null where absent), read in one consistent snapshot. */
    @PersistentTransaction(readOnly = true)
    String[] getAll(String[] keys);

    /** Number of entries. */
    @PersistentTransaction(readOnly = true)
    long size();

    /**
     * Up to {@code limit} entries with keys from {@code from} to {@code to} (inclusive; null = unbounded;
     * {@code from} itself only if {@code fromInclusive}), in ascending key order. Keys order by their UTF-8 bytes
     * (Unicode code point order). To page through a large range, call again with the last key returned as
     * {@code from} and {@code fromInclusive = false}.
     *
     * @throws UnsupportedOperationException on a hash map (it keeps no order)
     * @throws IllegalArgumentException if {@code limit} is outside {@code 1..}{@value #MAX_SCAN_LIMIT}
     */
    @PersistentTransaction(readOnly = true)
    List<Map.Entry<String, String>> scan(String from, boolean fromInclusive, String to, int limit);
}
