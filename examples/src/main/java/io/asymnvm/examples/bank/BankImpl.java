package io.asymnvm.examples.bank;

import io.asymnvm.frontend.Transaction;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * {@link Bank} on the running {@link Transaction}. Deterministic, as persistent transactions must be: every
 * method is a function of the persistent state and its arguments only. Longs are little-endian, the byte order
 * of {@link Transaction#readLong(long)}.
 *
 * <pre>
 * root block:  0 count(8) | 8 balance[0](8) | 16 balance[1](8) | ... | 8 + 8 * (count - 1) balance[count-1](8)
 * </pre>
 */
public final class BankImpl implements Bank {
    private static final int COUNT_OFFSET = 0;
    private static final int BALANCES_OFFSET = 8;
    private static final int BALANCE_LENGTH = 8;

    @Override
    public void open(int accounts, long initialBalance) {
        if (accounts < 1) {
            throw new IllegalArgumentException("number of accounts must be positive: " + accounts);
        }
        if (initialBalance < 0) {
            throw new IllegalArgumentException("initial balance must not be negative: " + initialBalance);
        }
        Transaction tx = Transaction.current();
        long root = tx.root();
        if (root != 0) {
            long existing = tx.readLong(root + COUNT_OFFSET);
            if (existing != accounts) {
                throw new IllegalStateException("bank already open with " + existing + " accounts, asked for "
                        + accounts);
            }
            return;
        }
        long length = BALANCES_OFFSET + (long) BALANCE_LENGTH * accounts;
        long block = tx.allocate(length);
        ByteBuffer image = ByteBuffer.allocate(Math.toIntExact(length)).order(ByteOrder.LITTLE_ENDIAN);
        image.putLong(COUNT_OFFSET, accounts);
        if (initialBalance != 0) {
            for (int i = 0; i < accounts; i++) {
                image.putLong((int) balanceOffset(i), initialBalance);
            }
            tx.write(block, image.array());
        } else {
            tx.writeLong(block + COUNT_OFFSET, accounts);
        }
        tx.setRoot(block);
    }

    @Override
    public void transfer(int from, int to, long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("transfer amount must not be negative: " + amount);
        }
        Transaction tx = Transaction.current();
        long root = requireRoot(tx);
        long count = tx.readLong(root + COUNT_OFFSET);
        long fromAt = root + balanceOffset(checkAccount(from, count));
        long toAt = root + balanceOffset(checkAccount(to, count));
        long fromBalance = tx.readLong(fromAt);
        if (fromBalance < amount) {
            throw new InsufficientFundsException(from, fromBalance, amount);
        }
        if (from == to || amount == 0) {
            return;
        }
        tx.writeLong(fromAt, fromBalance - amount);
        tx.writeLong(toAt, Math.addExact(tx.readLong(toAt), amount));
    }

    @Override
    public long balance(int account) {
        Transaction tx = Transaction.current();
        long root = requireRoot(tx);
        return tx.readLong(root + balanceOffset(checkAccount(account, tx.readLong(root + COUNT_OFFSET))));
    }

    @Override
    public long total() {
        Transaction tx = Transaction.current();
        long root = requireRoot(tx);
        long count = tx.readLong(root + COUNT_OFFSET);
        long sum = 0;
        for (int i = 0; i < count; i++) {
            sum += tx.readLong(root + balanceOffset(i));
        }
        return sum;
    }

    @Override
    public int accounts() {
        Transaction tx = Transaction.current();
        long root = tx.root();
        return root == 0 ? 0 : (int) tx.readLong(root + COUNT_OFFSET);
    }

    private static long requireRoot(Transaction tx) {
        long root = tx.root();
        if (root == 0) {
            throw new IllegalStateException("bank not open: call open(accounts, initialBalance) first");
        }
        return root;
    }

    private static int checkAccount(int account, long count) {
        if (account < 0 || account >= count) {
            throw new IllegalArgumentException("account index " + account + " out of range [0, " + count
                    + ") (the bank has " + count + " accounts)");
        }
        return account;
    }

    private static long balanceOffset(int account) {
        return BALANCES_OFFSET + (long) BALANCE_LENGTH * account;
    }
}
