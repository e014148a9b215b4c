package io.asymnvm.structures;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.Codecs;

/** Transactions spanning a hash map and a B+tree (both {@code Long -> String}). */
public interface MoveOps {
    /** Creates both structures; returns {hash map root, B+tree root}. */
    @PersistentTransaction
    long[] createPair();

    /**
     * Moves each key from the hash map to the B+tree, in order; with {@code failAfter >= 0}, throws after that
     * many keys were moved.
     */
    @PersistentTransaction
    void move(long hashRoot, long treeRoot, long[] keys, int failAfter);

    final class Impl implements MoveOps {
        @Override
        public long[] createPair() {
            Transaction tx = Transaction.current();
            return new long[] {PersistentHashMap.create(tx, "from", Codecs.LONG, Codecs.STRING),
                PersistentBTree.create(tx, "to", Codecs.LONG, Codecs.STRING)};
        }

        @Override
        public void move(long hashRoot, long treeRoot, long[] keys, int failAfter) {
            Transaction tx = Transaction.current();
            PersistentHashMap<Long, String> from = PersistentHashMap.open(tx, hashRoot, Codecs.LONG, Codecs.STRING);
            PersistentBTree<Long, String> to = PersistentBTree.open(tx, treeRoot, Codecs.LONG, Codecs.STRING);
            for (int i = 0; i < keys.length; i++) {
                if (i == failAfter) {
                    throw new IllegalStateException("injected failure after moving " + i + " keys");
                }
                String v = from.remove(keys[i]);
                if (v == null) {
                    throw new IllegalArgumentException("no key " + keys[i] + " to move");
                }
                to.put(keys[i], v);
            }
        }
    }
}
