package io.asymnvm.structures;

import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.ValueCodec;

/**
 * What both structures' algorithms offer on encoded keys and values, within one operation's session; the typed
 * map operations in {@link AbstractPersistentMap} are written once on top of it. {@link #flush()} writes the
 * operation's changed byte ranges to the transaction.
 */
interface MapCore {
    byte[] get(byte[] key);

    /**
     * The value of {@code key} decoded by {@code codec} (null if absent), straight from the node page where the
     * value is stored inline: no copy of the value's bytes first. Only for codecs that copy what they decode
     * (the built-ins of {@link Codecs}): the page is the transaction's shared page.
     */
    default <T> T get(byte[] key, ValueCodec<T> codec) {
        byte[] v = get(key);
        return v == null ? null : codec.decode(v, 0, v.length);
    }

    /**
     * Inserts or replaces; returns the previous value as a fresh array the caller owns, or null. {@code value} is
     * only copied: no reference to it is kept past the call.
     */
    byte[] put(byte[] key, byte[] value, boolean onlyIfAbsent);

    /** Removes {@code key}; returns its value as a fresh array the caller owns, or null. */
    byte[] remove(byte[] key);

    long size();

    void flush();
}
