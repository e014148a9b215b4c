package io.asymnvm.examples.bank;

import io.asymnvm.frontend.PersistentTransaction;

/**
 * A bank whose accounts live in a persistent hash map of account id to balance
 * ({@code PersistentHashMap<Long, Long>}), so accounts have arbitrary {@code long} ids and can be added at any
 * time. Use it through {@code nvm.transactional(HashBank.class, new HashBankImpl(nvm, "accounts"))}: each method
 * is then one persistent transaction, and a mutating call returns only once it is durable.
 *
 * <p>Compare {@link Bank}, the same operations on a fixed array at the frontend's root: fewer bytes per
 * transfer, but a fixed number of accounts.
 */
public interface HashBank {

    /**
     * Opens the accounts {@code ids} with {@code initialBalance} each; ids that already have an account are left
     * as they are (so calling it again is harmless). Returns how many accounts were opened.
     *
     * @throws IllegalArgumentException if {@code initialBalance < 0}
     */
    @PersistentTransaction
    int openAccounts(long[] ids, long initialBalance);

    /**
     * Moves {@code amount} from account {@code from} to account {@code to}.
     *
     * @throws InsufficientFundsException if {@code from} holds less than {@code amount}; the transaction is
     *         aborted and nothing changes
     * @throws IllegalArgumentException for an unknown account or a negative amount (nothing changes)
     */
    @PersistentTransaction
    void transfer(long from, long to, long amount);

    /**
     * Closes account {@code id} and returns its balance, which leaves the bank (the total drops by it).
     *
     * @throws IllegalArgumentException for an unknown account
     */
    @PersistentTransaction
    long close(long id);

    /** The balance of account {@code id}. @throws IllegalArgumentException for an unknown account */
    @PersistentTransaction(readOnly = true)
    long balance(long id);

    /** Whether account {@code id} exists. */
    @PersistentTransaction(readOnly = true)
    boolean exists(long id);

    /** The number of accounts. */
    @PersistentTransaction(readOnly = true)
    long accounts();

    /** The sum of every balance; transfers keep it constant. Reads every account: for small banks. */
    @PersistentTransaction(readOnly = true)
    long total();
}
