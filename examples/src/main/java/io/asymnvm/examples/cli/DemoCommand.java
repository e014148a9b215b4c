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
 * {@code asymnvm demo}: three parts on one embedded backend, each followed by an oracle in DRAM.
 * <ol>
 *   <li>The bank ({@link Bank}, an array at the frontend's root): seeded random transfers, one in
 *       {@value #OVERDRAW_ONE_IN} deliberately larger than the source balance, so it aborts with
 *       {@link InsufficientFundsException}.</li>
 *   <li>Key-values ({@link DemoKeyValues}): puts and deletes on a hash map opened by name.</li>
 *   <li>Events ({@link DemoEvents}): timestamped events recorded in batches in a B+tree opened by name, and one
 *       batch with a taken timestamp that must be refused whole.</li>
 * </ol>
 * Then the frontend and backend are closed, the same PM image is reopened, and every part is checked against its
 * oracle: each balance and the total, each key of the key space and the map's size, the event count, every event
 * of the run in order and random range queries. Exit code 0 only if every outcome was as the oracles predicted
 * and everything reopened matches them.
 *
 * <p>With {@code --dir} an existing image is continued (a bank of the same size; the oracles start from what the
 * image holds); without it a scratch directory is used and deleted afterwards.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Bank transfers, hash-map key-values and B+tree events on an embedded backend, verified "
                + "against oracles after a reopen.")
public final class DemoCommand implements Callable<Integer> {
    static final long INITIAL_BALANCE = 10_000;
    static final int MAX_AMOUNT = 100;
    /** One transfer in this many asks for more than its source holds. */
    static final int OVERDRAW_ONE_IN = 200;
    static final int MAX_ACCOUNTS = 16_384;
    static final int MAX_TRANSFERS = 100_000_000;
    static final int MAX_STRUCTURE_OPS = 10_000_000;
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

    @Option(names = "--kv", defaultValue = "5000", description = "Puts and deletes on the hash map '"
            + DemoKeyValues.NAME + "' (0.." + MAX_STRUCTURE_OPS + "). Default: ${DEFAULT-VALUE}.")
    int kvOps;

    @Option(names = "--events", defaultValue = "5000", description = "Events recorded in the B+tree '"
            + DemoEvents.NAME + "' (0.." + MAX_STRUCTURE_OPS + "). Default: ${DEFAULT-VALUE}.")
    int events;

    @Option(names = "--seed", description = "Seed of the random operations. Default: chosen at random (printed).")
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
        if (kvOps < 0 || kvOps > MAX_STRUCTURE_OPS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--kv': " + kvOps
                    + " is outside [0, " + MAX_STRUCTURE_OPS + "]");
        }
        if (events < 0 || events > MAX_STRUCTURE_OPS) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--events': " + events
                    + " is outside [0, " + MAX_STRUCTURE_OPS + "]");
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
        out.printf(Locale.ROOT, "demo: %d accounts, %d transfers, %d key-value operations, %d events, seed %d, "
                + "PM image in %s%n", accounts, transfers, kvOps, events, s, where);
        out.flush();
        long[] oracle = new long[accounts];
        DemoKeyValues keyValues = kvOps > 0 ? new DemoKeyValues(kvOps, s) : null;
        DemoEvents eventPart = events > 0 ? new DemoEvents(events, s) : null;
        Transfers done;
        try (AsymNvm nvm = AsymNvm.embedded(where)) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            attach(nvm, keyValues, eventPart);
            bank.open(accounts, INITIAL_BALANCE);
            for (int i = 0; i < accounts; i++) {
                oracle[i] = bank.balance(i);
            }
            done = transfer(nvm, bank, new Random(s), oracle);
            double seconds = done.nanos() / 1e9;
            out.printf(Locale.ROOT, "transfers: %d committed, %d aborted (insufficient funds), %.0f commits/s, "
                            + "%.2f round trips per commit%n", done.committed(), done.aborted(),
                    seconds > 0 ? done.committed() / seconds : 0.0, done.roundTripsPerCommit());
            out.flush();
            if (keyValues != null) {
                keyValues.run();
                out.println(keyValues.summary());
                out.flush();
            }
            if (eventPart != null) {
                eventPart.run();
                out.println(eventPart.summary());
                out.flush();
            }
        }

        List<String> failed = new ArrayList<>();
        out.println("after reopening the PM image:");
        try (AsymNvm nvm = AsymNvm.embedded(where)) {
            Bank bank = nvm.transactional(Bank.class, new BankImpl());
            attach(nvm, keyValues, eventPart);
            report(out, "bank", done.surprises(), verifyBank(bank, oracle), String.format(Locale.ROOT,
                    "total %d and all %d balances match the oracle", LongStream.of(oracle).sum(), accounts), failed);
            if (keyValues != null) {
                report(out, "key-values", keyValues.surprises(), keyValues.verify(), keyValues.verifiedSummary(),
                        failed);
            }
            if (eventPart != null) {
                report(out, "events", eventPart.surprises(), eventPart.verify(), eventPart.verifiedSummary(),
                        failed);
            }
        }
        String parts = "bank" + (keyValues != null ? ", key-values" : "") + (eventPart != null ? ", events" : "");
        if (failed.isEmpty()) {
            out.printf(Locale.ROOT, "verification: PASSED (%s)%n", parts);
        } else {
            out.printf(Locale.ROOT, "verification: FAILED (%s)%n", String.join(", ", failed));
        }
        out.flush();
        return failed.isEmpty() ? 0 : 1;
    }

    /** Registers the structure parts' interfaces, all before the frontend's first transaction. */
    private static void attach(AsymNvm nvm, DemoKeyValues keyValues, DemoEvents eventPart) {
        if (keyValues != null) {
            keyValues.attach(nvm);
        }
        if (eventPart != null) {
            eventPart.attach(nvm);
        }
    }

    /** Prints one part's outcome: PASSED with what was checked, or FAILED with the first problems. */
    private static void report(PrintWriter out, String part, List<String> surprises, List<String> mismatches,
                               String passed, List<String> failed) {
        List<String> problems = new ArrayList<>(surprises);
        problems.addAll(mismatches);
        if (problems.isEmpty()) {
            out.printf(Locale.ROOT, "  %s: PASSED (%s)%n", part, passed);
        } else {
            failed.add(part);
            out.printf(Locale.ROOT, "  %s: FAILED (%d unexpected outcomes, %d mismatches after reopen)%n", part,
                    surprises.size(), mismatches.size());
            problems.stream().limit(MAX_REPORTED_PROBLEMS).forEach(m -> out.println("    " + m));
            if (problems.size() > MAX_REPORTED_PROBLEMS) {
                out.printf(Locale.ROOT, "    ... and %d more%n", problems.size() - MAX_REPORTED_PROBLEMS);
            }
        }
        out.flush();
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

    /** Compares the reopened bank with the oracle; returns one line per difference. */
    private static List<String> verifyBank(Bank bank, long[] oracle) {
        List<String> mismatches = new ArrayList<>();
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
        return mismatches;
    }

    private ProgressBar progressBar() {
        return new ProgressBarBuilder().setTaskName("transfers").setInitialMax(transfers)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(250).build();
    }
}
