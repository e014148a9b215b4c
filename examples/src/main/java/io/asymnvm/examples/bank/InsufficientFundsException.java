package io.asymnvm.examples.bank;

/** A transfer asked for more than its source account holds; the transfer was aborted and changed nothing. */
public final class InsufficientFundsException extends RuntimeException {
    private final long account;
    private final long balance;
    private final long amount;

    public InsufficientFundsException(long account, long balance, long amount) {
        super("account " + account + " holds " + balance + ", cannot transfer " + amount);
        this.account = account;
        this.balance = balance;
        this.amount = amount;
    }

    public long account() {
        return account;
    }

    public long balance() {
        return balance;
    }

    public long amount() {
        return amount;
    }
}
