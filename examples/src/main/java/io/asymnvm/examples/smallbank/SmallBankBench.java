package io.asymnvm.examples.smallbank;

import io.asymnvm.examples.appbench.AppBenchConfig;
import io.asymnvm.examples.appbench.AppBenchReport;
import io.asymnvm.examples.appbench.AppRig;
import io.asymnvm.examples.appbench.MixDriver;
import io.asymnvm.examples.appbench.MixPhase;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.frontend.tx.EngineStats;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * {@code bench smallbank}: opens {@code scale} customers ({@value #POPULATE_BATCH} per transaction), runs the mix
 * unmeasured for the warm-up, then measured, then checks that the bank's total money equals what it was populated
 * with plus what every committed call reported adding ({@code money_conserved}). Also the {@code smallbank}
 * workload of the comparison matrix.
 */
public final class SmallBankBench implements ReportWorkload {
    public static final int POPULATE_BATCH = 64;
    public static final long MIN_ACCOUNTS = 2;
    /** Bytes of PM and cache a customer's three rows take, roughly. */
    static final long BYTES_PER_ACCOUNT = 512;
    static final long REPORT_ACCOUNTS = 100_000;
    static final long QUICK_ACCOUNTS = 500;

    @Override
    public String name() {
        return "smallbank";
    }

    @Override
    public ReportResult run(ReportRun run) {
        AppBenchConfig config = new AppBenchConfig(FabricKind.parse(run.fabric()), run.threads(), run.seconds(),
                run.quick() ? 0.2 : 2, run.quick() ? QUICK_ACCOUNTS : REPORT_ACCOUNTS, 42);
        AppBenchReport report = run(config, line -> { });
        if (!Boolean.TRUE.equals(report.checks().get("money_conserved"))) {
            throw new IllegalStateException("SmallBank lost or made money: " + report.checks());
        }
        return report.toReportResult();
    }

    /** Runs one benchmark; {@code progress} receives a line per phase. */
    public static AppBenchReport run(AppBenchConfig config, Consumer<String> progress) {
        Objects.requireNonNull(progress, "progress");
        config.requireScale("accounts", MIN_ACCOUNTS);
        long accounts = config.scale();
        try (AppRig rig = AppRig.start(config.fabric(), AppBenchConfig.pmBytes(accounts, BYTES_PER_ACCOUNT),
                AppBenchConfig.cacheBytes(accounts, BYTES_PER_ACCOUNT), "asymnvm-bench-smallbank-")) {
            SmallBank bank = rig.nvm().transactional(SmallBank.class, new SmallBankImpl(rig.nvm()));
            progress.accept("opening " + accounts + " accounts");
            long loadStart = System.nanoTime();
            long initial = populate(bank, accounts, config.seed());
            long loadNanos = System.nanoTime() - loadStart;
            SmallBankMix mix = new SmallBankMix(bank, accounts);
            MixDriver driver = new MixDriver(mix, config.threads());
            if (config.warmupSeconds() > 0) {
                progress.accept("warming up for " + config.warmupSeconds() + " s");
                driver.run(config.warmupSeconds(), config.seed() + 1);
            }
            progress.accept("measuring for " + config.seconds() + " s on " + config.threads() + " threads");
            EngineStats before = rig.nvm().stats();
            MixPhase phase = driver.run(config.seconds(), config.seed() + 2);
            EngineStats after = rig.nvm().stats();
            long expected = initial + mix.moneyAdded();
            long actual = bank.total();
            Map<String, Object> checks = new LinkedHashMap<>();
            checks.put("money_initial", initial);
            checks.put("money_expected", expected);
            checks.put("money_actual", actual);
            checks.put("money_conserved", expected == actual);
            return AppBenchReport.of("smallbank", config.fabric().cliName(), config.threads(), config.seconds(),
                    "accounts", accounts, loadNanos, phase, before, after, checks);
        }
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
