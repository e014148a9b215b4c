package io.asymnvm.system;

import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.frontend.Transaction;

/**
 * A read-only probe of the {@link Accounts} block: every balance in one transaction, so a check sees one
 * consistent state. Registered next to {@code Accounts} by the crash tests; it never logs anything.
 */
public interface Ledger {

    /** All balances, or null if the accounts were never created (the root is 0). */
    @PersistentTransaction(readOnly = true)
    long[] balances();

    /** Implementation through {@link Transaction#current()}, over the layout of {@link Accounts.Impl}. */
    final class Impl implements Ledger {
        @Override
        public long[] balances() {
            Transaction tx = Transaction.current();
            long block = tx.root();
            if (block == 0) {
                return null;
            }
            int count = (int) tx.readLong(block);
            long[] out = new long[count];
            for (int i = 0; i < count; i++) {
                out[i] = tx.readLong(block + 8 + 8L * i);
            }
            return out;
        }
    }
}
