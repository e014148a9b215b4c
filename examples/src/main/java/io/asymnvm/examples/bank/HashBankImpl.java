package io.asymnvm.examples.bank;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.codec.Codecs;

import java.util.Objects;

/**
 * {@link HashBank} on a {@code PersistentHashMap<Long, Long>} opened by name. The handle is opened once, outside
 * any transaction; the map is created by the first transaction that uses it. Deterministic: every method is a
 * function of the persistent state and its arguments. Every check runs before the first write, so an exception
 * leaves the map untouched (and the engine discards the transaction anyway).
 */
public final class HashBankImpl implements HashBank {
    private final PersistentHashMap<Long, Long> balances;

    public HashBankImpl(AsymNvm nvm, String name) {
        this.balances = PersistentHashMap.open(Objects.requireNonNull(nvm, "nvm"), name, Codecs.LONG, Codecs.LONG);
    }

    @Override
    public int openAccounts(long[] ids, long initialBalance) {
        Objects.requireNonNull(ids, "ids");
        if (initialBalance < 0) {
            throw new IllegalArgumentException("initial balance must not be negative: " + initialBalance);
        }
        int opened = 0;
        for (long id : ids) {
            if (balances.putIfAbsent(id, initialBalance) == null) {
                opened++;
            }
        }
        return opened;
    }

    @Override
    public void transfer(long from, long to, long amount) {
        if (amount < 0) {
            throw new IllegalArgumentException("transfer amount must not be negative: " + amount);
        }
        long fromBalance = require(from);
        long toBalance = require(to);
        if (fromBalance < amount) {
            throw new InsufficientFundsException(from, fromBalance, amount);
        }
        if (from == to || amount == 0) {
            return;
        }
        long credited = Math.addExact(toBalance, amount);
        balances.put(from, fromBalance - amount);
        balances.put(to, credited);
    }

    @Override
    public long close(long id) {
        long balance = require(id);
        balances.remove(id);
        return balance;
    }

    @Override
    public long balance(long id) {
        return require(id);
    }

    @Override
    public boolean exists(long id) {
        return balances.containsKey(id);
    }

    @Override
    public long accounts() {
        return balances.size();
    }

    @Override
    public long total() {
        long[] sum = {0};
        balances.forEach((id, balance) -> {
            sum[0] = Math.addExact(sum[0], balance);
            return true;
        });
        return sum[0];
    }

    private long require(long id) {
        Long b = balances.get(id);
        if (b == null) {
            throw new IllegalArgumentException("no account " + id);
        }
        return b;
    }
}
