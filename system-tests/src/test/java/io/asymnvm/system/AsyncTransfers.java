package io.asymnvm.system;

import io.asymnvm.frontend.Durability;
import io.asymnvm.frontend.PersistentTransaction;

/**
 * A transfer of the {@link Accounts} bank with ASYNC durability: it returns with its semantic record posted and
 * leaves the FLUSH to a later commit or the background flush, so a crash right after it leaves a record in the
 * ring that no FLUSH of its session persisted (the composed failures of issue 7, item 7).
 */
public interface AsyncTransfers {
    @PersistentTransaction(durability = Durability.ASYNC)
    void transferLater(int from, int to, long amount);

    /** The same writes as {@link Accounts.Impl#transfer}. */
    final class Impl implements AsyncTransfers {
        private final Accounts accounts = new Accounts.Impl();

        @Override
        public void transferLater(int from, int to, long amount) {
            accounts.transfer(from, to, amount);
        }
    }
}
