package io.asymnvm.examples.smallbank;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.appbench.AppBenchReport;
import io.asymnvm.examples.appbench.AppBenchRun;
import io.asymnvm.examples.appbench.AppReportWorkload;
import io.asymnvm.examples.appbench.Application;
import io.asymnvm.examples.appbench.TransactionMix;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.frontend.AsymNvm;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code bench smallbank}: opens {@code scale} customers ({@value #POPULATE_BATCH} per transaction), runs the mix
 * (see {@link AppBenchRun}), then checks that the bank's total money equals what it was populated with plus what
 * every committed call reported adding ({@code money_conserved}). The comparison
 * matrix runs it through {@link io.asymnvm.examples.appbench.AppReportWorkload}, where a failed check is an
 * exception.
 */
public final class SmallBankBench implements Application {
    public static final int POPULATE_BATCH = 64;
    public static final long MIN_ACCOUNTS = 2;
    /** Bytes of PM and cache a customer's three rows take, roughly. */
    static final long BYTES_PER_ACCOUNT = 512;

    @Override
    public String name() {
        return "smallbank";
    }

    @Override
    public String scaleName() {
        return "accounts";
    }

    @Override
    public long bytesPerUnit() {
        return BYTES_PER_ACCOUNT;
    }

    @Override
    public Loaded load(AsymNvm nvm, long accounts, long seed) {
        SmallBank bank = nvm.transactional(SmallBank.class, new SmallBankImpl(nvm));
        long initial = populate(bank, accounts, seed);
        SmallBankMix mix = new SmallBankMix(bank, accounts);
        return new Loaded() {
            @Override
            public TransactionMix mix() {
                return mix;
            }

            @Override
            public Map<String, Object> checks() {
                long expected = initial + mix.moneyAdded();
                long actual = bank.total();
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("money_initial", initial);
                m.put("money_expected", expected);
                m.put("money_actual", actual);
                m.put("money_conserved", expected == actual);
                return m;
            }
        };
    }

    /** This application as a row of the comparison matrix over {@code fabric}. */
    public static ReportWorkload reportWorkload(FabricKind fabric) {
        return new AppReportWorkload(new SmallBankBench(), MIN_ACCOUNTS, fabric);
    }

    /** Runs one benchmark; {@code progress} receives a line per phase. */
    public static AppBenchReport run(AppBenchConfig config, Consumer<String> progress) {
        return AppBenchRun.run(new SmallBankBench(), MIN_ACCOUNTS, config, progress);
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
