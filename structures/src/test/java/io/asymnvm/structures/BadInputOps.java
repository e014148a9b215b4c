package io.asymnvm.structures;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.codec.KeyCodec;

/** Transactions that feed structures bad input or fail on purpose. */
public interface BadInputOps {
    /** Opens {@code root} as the given type with the given built-in codecs. */
    @PersistentTransaction(readOnly = true)
    void open(long root, StructureType type, int keyCodecId, int valueCodecId);

    /**
     * Inside one transaction: a put with {@code badKey} (refused), a put with a null value (refused), both
     * exceptions caught, then a put of {@code goodKey -> "ok"}; returns the value read back.
     */
    @PersistentTransaction
    String catchBadInputThenPut(long root, String badKey, String goodKey);

    /** Puts {@code key} then throws. */
    @PersistentTransaction
    void putThenFail(long root, String key);

    /** A block that holds no structure. */
    @PersistentTransaction
    long allocateJunk();

    final class Impl implements BadInputOps {
        @Override
        public void open(long root, StructureType type, int keyCodecId, int valueCodecId) {
            Transaction tx = Transaction.current();
            KeyCodec<?> k = Codecs.builtin(keyCodecId);
            KeyCodec<?> v = Codecs.builtin(valueCodecId);
            if (type == StructureType.BTREE) {
                PersistentBTree.open(tx, root, k, v);
            } else {
                PersistentHashMap.open(tx, root, k, v);
            }
        }

        @Override
        public String catchBadInputThenPut(long root, String badKey, String goodKey) {
            PersistentMap<Object, String> m = MapOps.Impl.open(root);
            try {
                m.put(badKey, "bad");
                throw new AssertionError("oversized key accepted");
            } catch (IllegalArgumentException expected) {
                // refused before any write
            }
            try {
                m.put(goodKey, null);
                throw new AssertionError("null value accepted");
            } catch (NullPointerException expected) {
                // refused before any write
            }
            m.put(goodKey, "ok");
            return m.get(goodKey);
        }

        @Override
        public void putThenFail(long root, String key) {
            MapOps.Impl.open(root).put(key, "doomed");
            throw new IllegalStateException("injected failure after putting " + key);
        }

        @Override
        public long allocateJunk() {
            Transaction tx = Transaction.current();
            long block = tx.allocate(256);
            tx.writeLong(block, 0x1234_5678L);
            return block;
        }
    }
}
