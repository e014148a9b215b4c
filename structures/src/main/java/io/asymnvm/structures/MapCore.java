package io.asymnvm.structures;

/**
 * What both structures' algorithms offer on encoded keys and values, within one operation's session; the typed
 * map operations in {@link AbstractPersistentMap} are written once on top of it. {@link #flush()} writes the
 * operation's changed byte ranges to the transaction.
 */
interface MapCore {
    byte[] get(byte[] key);

    byte[] put(byte[] key, byte[] value, boolean onlyIfAbsent);

    byte[] remove(byte[] key);

    long size();

    void flush();
}
