package io.asymnvm.examples.smallbank;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.Objects;
import java.util.SplittableRandom;

/**
 * {@link SmallBank} on three named hash maps: Accounts ({@code name -> custid}), Savings and Checking
 * ({@code custid -> cents}). Deterministic; every check runs before the first write, so an abort leaves
 * everything as it was. Sums use exact arithmetic: an overflow aborts the transaction.
 */
public final class SmallBankImpl implements SmallBank {
    public static final String ACCOUNTS = "smallbank-accounts";
    public static final String SAVINGS = "smallbank-savings";
    public static final String CHECKING = "smallbank-checking";
    /** Initial balances of each account, in cents, drawn uniformly (OLTPBench's 10,000 .. 50,000). */
    public static final long MIN_BALANCE = 10_000_00L;
    public static final long MAX_BALANCE = 50_000_00L;

    private final PersistentHashMap<String, Long> accounts;
    private final PersistentHashMap<Long, Long> savings;
    private final PersistentHashMap<Long, Long> checking;

    public SmallBankImpl(AsymNvm nvm) {
        Objects.requireNonNull(nvm, "nvm");
        accounts = PersistentHashMap.open(nvm, ACCOUNTS, Codecs.STRING, Codecs.LONG);
        savings = PersistentHashMap.open(nvm, SAVINGS, Codecs.LONG, Codecs.LONG);
        checking = PersistentHashMap.open(nvm, CHECKING, Codecs.LONG, Codecs.LONG);
    }

    /** The name of customer {@code custId}. */
    public static String customerName(long custId) {
        return "customer-" + custId;
    }

    @Override
    public long populate(long first, int count, long seed) {
        if (count < 0 || first < 0) {
            throw new IllegalArgumentException("first customer and count must not be negative: " + first + ", "
                    + count);
        }
        long added = 0;
        for (long id = first; id < first + count; id++) {
            if (accounts.containsKey(customerName(id))) {
                continue;
            }
            SplittableRandom r = new SplittableRandom(seed ^ (id * 0x9E3779B97F4A7C15L));
            long s = r.nextLong(MIN_BALANCE, MAX_BALANCE + 1);
            long c = r.nextLong(MIN_BALANCE, MAX_BALANCE + 1);
            accounts.put(customerName(id), id);
            savings.put(id, s);
            checking.put(id, c);
            added += s + c;
        }
        return added;
    }

    @Override
    public long amalgamate(String name1, String name2) {
        long id1 = customer(name1);
        long id2 = customer(name2);
        if (id1 == id2) {
            throw new SmallBankUserAbortException("amalgamate needs two customers, got " + name1 + " twice");
        }
        long total = Math.addExact(savings.get(id1), checking.get(id1));
        long credited = Math.addExact(checking.get(id2), total);
        savings.put(id1, 0L);
        checking.put(id1, 0L);
        checking.put(id2, credited);
        return 0;
    }

    @Override
    public long balance(String name) {
        long id = customer(name);
        return Math.addExact(savings.get(id), checking.get(id));
    }

    @Override
    public long depositChecking(String name, long amount) {
        requireAmount(amount);
        long id = customer(name);
        checking.put(id, Math.addExact(checking.get(id), amount));
        return amount;
    }

    @Override
    public long sendPayment(String name1, String name2, long amount) {
        requireAmount(amount);
        long id1 = customer(name1);
        long id2 = customer(name2);
        long from = checking.get(id1);
        if (from < amount) {
            throw new SmallBankUserAbortException("checking of " + name1 + " holds " + from + ", cannot send "
                    + amount);
        }
        if (id1 != id2) {
            long to = Math.addExact(checking.get(id2), amount);
            checking.put(id1, from - amount);
            checking.put(id2, to);
        }
        return 0;
    }

    @Override
    public long transactSavings(String name, long amount) {
        requireAmount(amount);
        long id = customer(name);
        long left = savings.get(id) - amount;
        if (left < 0) {
            throw new SmallBankUserAbortException("savings of " + name + " would go negative: " + left);
        }
        savings.put(id, left);
        return -amount;
    }

    @Override
    public long writeCheck(String name, long amount) {
        requireAmount(amount);
        long id = customer(name);
        long c = checking.get(id);
        long total = Math.addExact(savings.get(id), c);
        long debit = total < amount ? amount + 1 : amount;
        checking.put(id, Math.subtractExact(c, debit));
        return -debit;
    }

    @Override
    public long savings(String name) {
        return savings.get(customer(name));
    }

    @Override
    public long checking(String name) {
        return checking.get(customer(name));
    }

    @Override
    public long customers() {
        return accounts.size();
    }

    @Override
    public long total() {
        long[] sum = {0};
        savings.forEach((id, cents) -> {
            sum[0] = Math.addExact(sum[0], cents);
            return true;
        });
        checking.forEach((id, cents) -> {
            sum[0] = Math.addExact(sum[0], cents);
            return true;
        });
        return sum[0];
    }

    private long customer(String name) {
        Long id = accounts.get(Objects.requireNonNull(name, "name"));
        if (id == null) {
            throw new SmallBankUserAbortException("no customer " + name);
        }
        return id;
    }

    private static void requireAmount(long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("amount must not be negative: " + amount);
        }
    }
}
