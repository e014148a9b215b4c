package io.asymnvm.examples.commit;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;

/**
 * One persistent long, the smallest useful transaction: {@link #set(long)} writes 8 bytes of redo and logs one
 * small semantic record. The frontend's root is the register's block.
 */
public interface Register {

    /** Allocates the register if this frontend has no root yet. */
    @PersistentTransaction
    void create();

    @PersistentTransaction
    void set(long value);

    @PersistentTransaction(readOnly = true)
    long get();

    /** The implementation on the running {@link Transaction}. */
    final class Impl implements Register {
        @Override
        public void create() {
            Transaction tx = Transaction.current();
            if (tx.root() == 0) {
                tx.setRoot(tx.allocate(8));
            }
        }

        @Override
        public void set(long value) {
            Transaction tx = Transaction.current();
            tx.writeLong(requireRoot(tx), value);
        }

        @Override
        public long get() {
            Transaction tx = Transaction.current();
            return tx.readLong(requireRoot(tx));
        }

        private static long requireRoot(Transaction tx) {
            long root = tx.root();
            if (root == 0) {
                throw new IllegalStateException("register not created");
            }
            return root;
        }
    }
}
