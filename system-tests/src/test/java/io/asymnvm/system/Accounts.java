package io.asymnvm.system;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;

/** Bank accounts in one persistent block (count | balances); the system tests' workload. */
public interface Accounts {
    /** Creates the accounts and returns the heap address of the block. */
    @PersistentTransaction
    long create(int count, long initial);

    @PersistentTransaction
    void transfer(int from, int to, long amount);

    @PersistentTransaction(readOnly = true)
    long balance(int account);

    /** Implementation through {@link Transaction#current()}. */
    final class Impl implements Accounts {
        @Override
        public long create(int count, long initial) {
            Transaction tx = Transaction.current();
            long block = tx.allocate(8L + 8L * count);
            tx.writeLong(block, count);
            for (int i = 0; i < count; i++) {
                tx.writeLong(block + 8 + 8L * i, initial);
            }
            tx.setRoot(block);
            return block;
        }

        @Override
        public void transfer(int from, int to, long amount) {
            Transaction tx = Transaction.current();
            long block = tx.root();
            long a = block + 8 + 8L * from;
            long b = block + 8 + 8L * to;
            tx.writeLong(a, tx.readLong(a) - amount);
            tx.writeLong(b, tx.readLong(b) + amount);
        }

        @Override
        public long balance(int account) {
            Transaction tx = Transaction.current();
            return tx.readLong(tx.root() + 8 + 8L * account);
        }
    }
}
