package io.asymnvm.examples.putbench;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.PersistentMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.Objects;

/**
 * The benchmark's persistent store: one {@code PersistentHashMap<String, byte[]>} opened by name. Use it through
 * {@code nvm.transactional(PutStore.class, new PutStore.Impl(nvm, name))}: each call is one transaction, and
 * {@link #put} returns once it is durable (SYNC).
 */
public interface PutStore {
    /** Associates {@code value} with {@code key}; returns the previous value's length, or -1 if there was none. */
    @PersistentTransaction
    int put(String key, byte[] value);

    /** The value of {@code key}, or null. */
    @PersistentTransaction(readOnly = true)
    byte[] get(String key);

    /** The implementation over a hash map opened by name (created on first use, inside a transaction). */
    final class Impl implements PutStore {
        private final PersistentMap<String, byte[]> map;

        public Impl(AsymNvm nvm, String name) {
            Objects.requireNonNull(nvm, "nvm");
            this.map = PersistentHashMap.open(nvm, name, Codecs.STRING, Codecs.BYTES);
        }

        @Override
        public int put(String key, byte[] value) {
            byte[] old = map.put(key, value);
            return old == null ? -1 : old.length;
        }

        @Override
        public byte[] get(String key) {
            return map.get(key);
        }
    }
}
