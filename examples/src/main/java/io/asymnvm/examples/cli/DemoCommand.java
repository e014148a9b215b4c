package io.asymnvm.examples.cli;

import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.examples.bank.InsufficientFundsException;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.EngineStats;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.stream.LongStream;

/**
 * {@code asymnvm demo}: the bank on an embedded backend. Runs seeded random transfers (one in
 * {@value #OVERDRAW_ONE_IN} deliberately larger than the source balance, so it aborts with
 * {@link InsufficientFundsException}) while an oracle in DRAM follows every acknowledged transfer; then closes
 * the frontend and backend, reopens the same PM image and checks every balance and the total against the
 * oracle. Exit code 0 only if every outcome was as the oracle predicted and the reopened bank matches it.
 *
 * <p>With {@code --dir} an existing bank of the same size is continued (the oracle starts from its balances);
 * without it a scratch directory is used and deleted afterwards.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Bank transfers on an embedded backend, verified against an oracle after a reopen.")
public final class DemoCommand implements Callable<Integer> {
    static final long INITIAL_BALANCE = 10_000;
    static final int MAX_AMOUNT = 100;
    /** One transfer in this many asks for more than its source holds. */
    static final int OVERDRAW_ONE_IN = 200;
    static final int MAX_ACCOUNTS = 16_384;
    static final int MAX_TRANSFERS = 100_000_000;
    private static final int MAX_REPORTED_PROBLEMS = 5;

    @Spec
    CommandSpec spec;

    @Option(names = "--dir", description = "Directory of the PM image (kept). Default: a scratch directory "
            + "under /dev/shm (or java.io.tmpdir), deleted afterwards.")
    Path dir;

    @Option(names = "--transfers", defaultValue = "20000", description = "Transfers to run. Default: ${DEFAULT-VALUE}.")
    int transfers;

    @Option(names = "--accounts", defaultValue = "64", description = "Accounts (2.." + MAX_ACCOUNTS
            + "). Default: ${DEFAULT-VALUE}.")
    int accounts;

    @Option(names = "--seed", description = "Seed of the random transfers. Default: chosen at random (printed).")
    Long seed;

    @Override
    public Integer call() {
        if (transfers < 0 || transfers > MAX_TRANSFERS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--transfers': " + transfers
                    + " is outside [0, " + MAX_TRANSFERS + "]");
        }
        if (accounts < 2 || accounts > MAX_ACCOUNTS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--accounts': " + accounts
                    + " is outside [2, " + MAX_ACCOUNTS + "]");
        }
        long s = seed != null ? seed : new Random().nextLong();
        Path where = dir != null ? dir : ScratchDirectory.create("asymnvm-demo-");
        try {
            return run(where, s, spec.commandLine().getOut());
        } finally {
            if (dir == null) {
                ScratchDirectory.delete(where);
            }
        }
    }

    /** What the transfer phase did; {@code surprises} are outcomes the oracle did not predict. */
    private record Transfers(long committed, long aborted, long nanos, double roundTripsPerCommit,
                             List<String> surprises) {
    }

    private int run(Path where, long s, PrintWriter out) {
        out.printf(Locale.ROOT, "demo: %d accounts, %d transfers, seed %d, PM image in %s%n", accounts, transfers,
                s, where);
        out.flush();
        long[] oracle = new long[accounts];
        Transfers done;
        try (AsymNvm nvm = AsymNvm.embedded(where)) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            bank.open(accounts, INITIAL_BALANCE);
            for (int i = 0; i < accounts; i++) {
                oracle[i] = bank.balance(i);
            }
            done = transfer(nvm, bank, new Random(s), oracle);
        }
        double seconds = done.nanos() / 1e9;
        out.printf(Locale.ROOT, "transfers: %d committed, %d aborted (insufficient funds), %.0f commits/s, "
                        + "%.2f round trips per commit%n", done.committed(), done.aborted(),
                seconds > 0 ? done.committed() / seconds : 0.0, done.roundTripsPerCommit());
        out.flush();

        List<String> problems = new ArrayList<>(done.surprises());
        problems.addAll(verify(where, oracle));
        if (problems.isEmpty()) {
            out.printf(Locale.ROOT, "verification: PASSED (reopened: total %d and all %d balances match the "
                    + "oracle)%n", LongStream.of(oracle).sum(), accounts);
        } else {
            out.printf(Locale.ROOT, "verification: FAILED (%d unexpected outcomes, %d mismatches after reopen)%n",
                    done.surprises().size(), problems.size() - done.surprises().size());
            problems.stream().limit(MAX_REPORTED_PROBLEMS).forEach(m -> out.println("  " + m));
            if (problems.size() > MAX_REPORTED_PROBLEMS) {
                out.printf(Locale.ROOT, "  ... and %d more%n", problems.size() - MAX_REPORTED_PROBLEMS);
            }
        }
        out.flush();
        return problems.isEmpty() ? 0 : 1;
    }

    /** Runs the random transfers, keeping {@code oracle} equal to every acknowledged outcome. */
    private Transfers transfer(AsymNvm nvm, Bank bank, Random random, long[] oracle) {
        long committed = 0;
        long aborted = 0;
        List<String> surprises = new ArrayList<>();
        EngineStats before = nvm.stats();
        long start = System.nanoTime();
        try (ProgressBar bar = progressBar()) {
            for (int t = 0; t < transfers; t++) {
                int from = random.nextInt(accounts);
                int to = random.nextInt(accounts - 1);
                if (to >= from) {
                    to++;
                }
                long amount = random.nextInt(OVERDRAW_ONE_IN) == 0
                        ? oracle[from] + 1 + random.nextInt(MAX_AMOUNT)
                        : 1 + random.nextInt(MAX_AMOUNT);
                boolean expectCommit = oracle[from] >= amount;
                try {
                    bank.transfer(from, to, amount);
                    committed++;
                    if (!expectCommit) {
                        surprises.add("transfer " + t + " of " + amount + " from account " + from
                                + " committed, but the oracle balance was " + oracle[from]);
                    }
                    oracle[from] -= amount;
                    oracle[to] += amount;
                } catch (InsufficientFundsException e) {
                    aborted++;
                    if (expectCommit) {
                        surprises.add("transfer " + t + " aborted (" + e.getMessage()
                                + "), but the oracle balance was " + oracle[from]);
                    }
                }
                bar.step();
            }
        }
        long nanos = System.nanoTime() - start;
        EngineStats after = nvm.stats();
        long commits = after.commits() - before.commits();
        long roundTrips = after.commitRoundTrips() - before.commitRoundTrips();
        return new Transfers(committed, aborted, nanos, commits == 0 ? 0.0 : roundTrips / (double) commits,
                surprises);
    }

    /** Reopens the image and compares it with the oracle; returns one line per difference. */
    private List<String> verify(Path where, long[] oracle) {
        List<String> mismatches = new ArrayList<>();
        try (AsymNvm nvm = AsymNvm.embedded(where)) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            int n = bank.accounts();
            if (n != oracle.length) {
                mismatches.add("reopened bank has " + n + " accounts, expected " + oracle.length);
                return mismatches;
            }
            long expectedTotal = 0;
            for (int i = 0; i < n; i++) {
                long actual = bank.balance(i);
                expectedTotal += oracle[i];
                if (actual != oracle[i]) {
                    mismatches.add("account " + i + " holds " + actual + ", oracle " + oracle[i]);
                }
            }
            long total = bank.total();
            if (total != expectedTotal) {
                mismatches.add("total is " + total + ", oracle " + expectedTotal);
            }
        }
        return mismatches;
    }

    private ProgressBar progressBar() {
        return new ProgressBarBuilder().setTaskName("transfers").setInitialMax(transfers)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(250).build();
    }
}
