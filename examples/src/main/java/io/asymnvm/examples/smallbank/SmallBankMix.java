package io.asymnvm.examples.smallbank;

import io.asymnvm.examples.appbench.Outcome;
import io.asymnvm.examples.appbench.TransactionMix;

import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * SmallBank's standard mix (OLTPBench's): Amalgamate 15%, Balance 15%, DepositChecking 15%, SendPayment 25%,
 * TransactSavings 15%, WriteCheck 15%, with OLTPBench's amounts (1.30, 5.00, 20.20, 5.00) and hotspot access:
 * {@value #HOTSPOT_PERCENT}% of the customers a transaction picks come from the first
 * {@value #HOTSPOT_SHARE_PERCENT}% of the accounts. The oracle ({@link #moneyAdded()}) adds up the change of total
 * money every committed call returned; a user abort adds nothing, since it changed nothing.
 */
public final class SmallBankMix implements TransactionMix {
    public static final List<String> TYPES = List.of("AMALGAMATE", "BALANCE", "DEPOSIT_CHECKING", "SEND_PAYMENT",
            "TRANSACT_SAVINGS", "WRITE_CHECK");
    public static final int HOTSPOT_PERCENT = 90;
    public static final int HOTSPOT_SHARE_PERCENT = 25;
    static final long DEPOSIT_CHECKING_AMOUNT = 130;
    static final long SEND_PAYMENT_AMOUNT = 500;
    static final long TRANSACT_SAVINGS_AMOUNT = 2020;
    static final long WRITE_CHECK_AMOUNT = 500;
    private static final int[] PERCENTAGES = {15, 15, 15, 25, 15, 15};

    private final SmallBank bank;
    private final long customers;
    private final long hotspot;
    private final LongAdder moneyAdded = new LongAdder();

    /** The mix over customers 0 .. {@code customers - 1}, at least two. */
    public SmallBankMix(SmallBank bank, long customers) {
        this.bank = Objects.requireNonNull(bank, "bank");
        if (customers < 2) {
            throw new IllegalArgumentException("SmallBank needs at least 2 customers: " + customers);
        }
        this.customers = customers;
        this.hotspot = Math.max(1, customers * HOTSPOT_SHARE_PERCENT / 100);
    }

    /** The total money the committed calls of this mix added (negative when they removed more). */
    public long moneyAdded() {
        return moneyAdded.sum();
    }

    /** A customer id: from the hotspot with probability {@value #HOTSPOT_PERCENT}%, else from the rest. */
    long customer(SplittableRandom r) {
        if (hotspot == customers || r.nextInt(100) < HOTSPOT_PERCENT) {
            return r.nextLong(hotspot);
        }
        return hotspot + r.nextLong(customers - hotspot);
    }

    /** Another customer than {@code first}, drawn the same way. */
    long other(SplittableRandom r, long first) {
        for (int i = 0; i < 64; i++) {
            long id = customer(r);
            if (id != first) {
                return id;
            }
        }
        return (first + 1) % customers;
    }

    @Override
    public List<String> types() {
        return TYPES;
    }

    @Override
    public int[] percentages() {
        return PERCENTAGES.clone();
    }

    @Override
    public Outcome run(int type, SplittableRandom r) {
        long c1 = customer(r);
        String n1 = SmallBankImpl.customerName(c1);
        try {
            long added = switch (type) {
                case 0 -> bank.amalgamate(n1, SmallBankImpl.customerName(other(r, c1)));
                case 1 -> {
                    bank.balance(n1);
                    yield 0;
                }
                case 2 -> bank.depositChecking(n1, DEPOSIT_CHECKING_AMOUNT);
                case 3 -> bank.sendPayment(n1, SmallBankImpl.customerName(other(r, c1)), SEND_PAYMENT_AMOUNT);
                case 4 -> bank.transactSavings(n1, TRANSACT_SAVINGS_AMOUNT);
                case 5 -> bank.writeCheck(n1, WRITE_CHECK_AMOUNT);
                default -> throw new IllegalArgumentException("SmallBank transaction type outside [0, 5]: " + type);
            };
            moneyAdded.add(added);
            return Outcome.OK;
        } catch (SmallBankUserAbortException e) {
            return Outcome.USER_ABORT;
        }
    }
}
