package io.asymnvm.examples.bank;

import io.asymnvm.frontend.PersistentTransaction;

/**
 * Accounts with balances in persistent memory. Use it through
 * {@code nvm.transactional(Bank.class, new BankImpl())}: each method is then one persistent transaction, and a
 * mutating call returns only once it is durable.
 *
 * <p>The bank is this frontend's root object: one block {@code count(8) | balance(8) x count}.
 */
public interface Bank {

    /**
     * Creates the bank with {@code accounts} accounts holding {@code initialBalance} each. Idempotent: if the
     * bank already exists with the same number of accounts it is left as it is (balances included).
     *
     * @throws IllegalArgumentException if {@code accounts < 1} or {@code initialBalance < 0}
     * @throws IllegalStateException if the bank already exists with a different number of accounts
     */
    @PersistentTransaction
    void open(int accounts, long initialBalance);

    /**
     * Moves {@code amount} from account {@code from} to account {@code to}.
     *
     * @throws InsufficientFundsException if {@code from} holds less than {@code amount}; the transaction is
     *         aborted and nothing changes
     * @throws IllegalArgumentException for an account index outside {@code [0, accounts())} or a negative amount
     * @throws IllegalStateException if the bank was never opened
     */
    @PersistentTransaction
    void transfer(int from, int to, long amount);

    /** The balance of one account. */
    @PersistentTransaction(readOnly = true)
    long balance(int account);

    /** The sum of every balance; constant over transfers. */
    @PersistentTransaction(readOnly = true)
    long total();

    /** The number of accounts, 0 if the bank was never opened. */
    @PersistentTransaction(readOnly = true)
    int accounts();
}
