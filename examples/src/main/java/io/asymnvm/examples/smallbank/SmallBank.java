package io.asymnvm.examples.smallbank;

import io.asymnvm.frontend.PersistentTransaction;

/**
 * SmallBank's transactions, each one persistent transaction (use through {@code nvm.transactional(SmallBank.class,
 * new SmallBankImpl(nvm))}). Balances are in cents. Every writing transaction returns the change it made to the
 * bank's total money (deposits add, withdrawals and checks remove, moves change nothing), so a caller can keep an
 * oracle of the total from the calls that returned. A user abort ({@link SmallBankUserAbortException}) and a bad
 * argument ({@link IllegalArgumentException}, e.g. a negative amount) change nothing.
 */
public interface SmallBank {

    /**
     * Opens customers {@code first .. first + count - 1} ({@link SmallBankImpl#customerName(long)}), each with a
     * savings and a checking balance drawn from {@code seed}; existing customers are left as they are. Returns the
     * money added.
     */
    @PersistentTransaction
    long populate(long first, int count, long seed);

    /** Amalgamate: moves all of customer 1's savings and checking into customer 2's checking. Returns 0. */
    @PersistentTransaction
    long amalgamate(String name1, String name2);

    /** Balance: savings plus checking. */
    @PersistentTransaction(readOnly = true)
    long balance(String name);

    /** DepositChecking: adds {@code amount} to checking. Returns {@code amount}. */
    @PersistentTransaction
    long depositChecking(String name, long amount);

    /** SendPayment: moves {@code amount} from customer 1's checking to customer 2's; aborts if short. Returns 0. */
    @PersistentTransaction
    long sendPayment(String name1, String name2, long amount);

    /** TransactSavings: withdraws {@code amount} from savings; aborts if savings would go negative. Returns -amount. */
    @PersistentTransaction
    long transactSavings(String name, long amount);

    /**
     * WriteCheck: takes {@code amount} from checking, and one cent more as a penalty when savings plus checking are
     * below {@code amount}. Returns minus what it took.
     */
    @PersistentTransaction
    long writeCheck(String name, long amount);

    /** The savings balance. */
    @PersistentTransaction(readOnly = true)
    long savings(String name);

    /** The checking balance. */
    @PersistentTransaction(readOnly = true)
    long checking(String name);

    /** Customers. */
    @PersistentTransaction(readOnly = true)
    long customers();

    /** Every savings and checking balance added up; reads every account. */
    @PersistentTransaction(readOnly = true)
    long total();
}
