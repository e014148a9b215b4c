package io.asymnvm.examples.smallbank;

import io.asymnvm.examples.appbench.AppBench;
import io.asymnvm.examples.appbench.AppBenchRun;
import io.asymnvm.frontend.AsymNvm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code bench smallbank}: opens {@code scale} customers ({@value #POPULATE_BATCH} per transaction), runs the mix
 * (see {@link AppBenchRun}), then checks that the bank's total money equals what it was populated with plus what
 * every committed call reported adding ({@code money_conserved}). The comparison
 * matrix runs it through {@link io.asymnvm.examples.appbench.AppReportWorkload}, where a failed check is an
 * exception.
 */
public final class SmallBankBench extends AppBench {
    public static final int POPULATE_BATCH = 64;
    public static final long MIN_ACCOUNTS = 2;
    /** Bytes of PM and cache a customer's three rows take, roughly. */
    static final long BYTES_PER_ACCOUNT = 512;

    public SmallBankBench() {
        super("smallbank", "accounts", BYTES_PER_ACCOUNT, MIN_ACCOUNTS);
    }

    @Override
    public Loaded load(AsymNvm nvm, long accounts, long seed) {
        SmallBank bank = nvm.transactional(SmallBank.class, new SmallBankImpl(nvm));
        long initial = populate(bank, accounts, seed);
        SmallBankMix mix = new SmallBankMix(bank, accounts);
        return Loaded.of(mix, () -> {
            long expected = initial + mix.moneyAdded();
            long actual = bank.total();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("money_initial", initial);
            m.put("money_expected", expected);
            m.put("money_actual", actual);
            m.put("money_conserved", expected == actual);
            return m;
        });
    }

    /** Opens customers 0 .. {@code accounts - 1}, {@link #POPULATE_BATCH} per transaction; returns the money. */
    public static long populate(SmallBank bank, long accounts, long seed) {
        long money = 0;
        for (long first = 0; first < accounts; first += POPULATE_BATCH) {
            money += bank.populate(first, (int) Math.min(POPULATE_BATCH, accounts - first), seed);
        }
        return money;
    }
}
