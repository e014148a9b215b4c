package io.asymnvm.examples.cli;

import io.asymnvm.examples.drill.Drill;
import io.asymnvm.examples.drill.DrillReport;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;

/**
 * {@code asymnvm drill}: SIGKILL the frontend or the backend at seeded random moments while a bank runs in
 * separate processes on loopback, recover, and verify against an oracle of acknowledged transfers (see
 * {@link Drill}). Exit code 0 only if every iteration ran and nothing was lost, partial or otherwise wrong. With
 * {@code --json}, standard output is exactly one JSON object; the progress bar and violations go to standard
 * error.
 */
@Command(name = "drill", mixinStandardHelpOptions = true,
        description = "Crash drill: kill -9 the frontend or the backend process repeatedly, recover, verify.")
public final class DrillCommand implements Callable<Integer> {
    static final int MAX_ITERATIONS = 1_000_000;
    static final int MAX_ACCOUNTS = 4096;
    static final int MAX_LISTED_VIOLATIONS = 10;

    @Spec
    CommandSpec spec;

    @Option(names = "--kill", required = true, converter = TargetConverter.class,
            description = "Process to kill: frontend, backend, mirror (a SYNC mirror of a cluster on ZooKeeper), or "
                    + "zookeeper (the cluster's ZooKeeper; every second iteration the backend too).")
    Drill.Target target;

    @Option(names = "--iterations", defaultValue = "20", description = "Kills (1.." + MAX_ITERATIONS
            + "). Default: ${DEFAULT-VALUE}.")
    int iterations;

    @Option(names = "--seed", description = "Seed of kill moments and transfers. Default: chosen at random "
            + "(printed).")
    Long seed;

    @Option(names = "--workload", defaultValue = "bank", description = "Workload: bank (btree and hash follow with "
            + "the structures). Default: ${DEFAULT-VALUE}.")
    String workload;

    @Option(names = "--accounts", defaultValue = "32", description = "Bank accounts (2.." + MAX_ACCOUNTS
            + "). Default: ${DEFAULT-VALUE}.")
    int accounts;

    @Option(names = "--max-acks", defaultValue = "400", description = "Most acknowledged transfers between two "
            + "kills (1..1000000). Default: ${DEFAULT-VALUE}.")
    int maxAcks;

    @Option(names = "--iteration-timeout", defaultValue = "60", description = "Seconds one iteration may take "
            + "before it counts as stuck (5..3600). Default: ${DEFAULT-VALUE}.")
    int iterationTimeout;

    @Option(names = "--keep", description = "Keep the scratch directory (PM file, logs, a transcript of every "
            + "process's output) for a post-mortem; its path is printed.")
    boolean keep;

    // ---- permanent loss through ZooKeeper (issue 9) ----

    @Option(names = "--permanent", description = "With --kill backend: the backend is lost for good (PM file "
            + "deleted); its mirror is promoted through an embedded ZooKeeper and a fresh mirror joins.")
    boolean permanent;

    @Option(names = "--lease-ms", defaultValue = "1000", description = "With --permanent: every node's lease "
            + "(ZooKeeper session timeout), 100..60000 ms. Default: ${DEFAULT-VALUE}.")
    int leaseMillis;

    @Option(names = "--mirrors", defaultValue = "1", description = "SYNC mirrors: 1 with --permanent and --kill "
            + "mirror, 1.." + Drill.MAX_MIRRORS + " with --kill zookeeper. Default: ${DEFAULT-VALUE}.")
    int mirrors;

    @Option(names = "--json", description = "Print one JSON object: iterations, acknowledged, lost, partial, "
            + "violations (with --kill zookeeper: commits_while_zk_down, promotions_without_quorum), recovery_ms_p50, "
            + "recovery_ms_max (and details).")
    boolean json;

    @Override
    public Integer call() {
        requireRange("--iterations", iterations, 1, MAX_ITERATIONS);
        requireRange("--accounts", accounts, 2, MAX_ACCOUNTS);
        requireRange("--max-acks", maxAcks, 1, 1_000_000);
        requireRange("--iteration-timeout", iterationTimeout, 5, 3600);
        if (!"bank".equals(workload)) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '--workload': " + workload
                    + " (only bank is available; btree and hash need the structures module)");
        }
        if (permanent && target != Drill.Target.BACKEND) {
            throw new ParameterException(spec.commandLine(), "--permanent applies to --kill backend only");
        }
        if (permanent || target == Drill.Target.MIRROR) {
            requireRange("--mirrors", mirrors, 1, 1);
            requireRange("--lease-ms", leaseMillis, 100, 60_000);
        }
        if (target == Drill.Target.ZOOKEEPER) { // ZooKeeper loss (issue 9 item 7)
            requireRange("--mirrors", mirrors, 1, Drill.MAX_MIRRORS);
            requireRange("--lease-ms", leaseMillis, 200, 60_000);
        }
        long s = seed != null ? seed : new Random().nextLong();
        Drill.Settings settings = new Drill.Settings(target, iterations, s, accounts, 1000, maxAcks,
                iterationTimeout, "256m", keep, permanent, leaseMillis,
                target == Drill.Target.ZOOKEEPER ? mirrors : 1);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (!json) {
            out.printf(Locale.ROOT, "drill: SIGKILL %s %d times, seed %d, bank of %d accounts%n", target.cliName(),
                    iterations, s, accounts);
            out.flush();
        }
        DrillReport report;
        try (ProgressBar bar = new ProgressBarBuilder().setTaskName("drill " + target.cliName())
                .setInitialMax(iterations).setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(500).build()) {
            report = Drill.run(settings, bar::step);
        }
        if (json) {
            out.println(report.toJson());
            for (String v : report.violations()) {
                err.println("asymnvm drill: violation: " + v);
            }
            if (report.keptDirectory() != null) {
                err.println("asymnvm drill: kept " + report.keptDirectory());
            }
            err.flush();
        } else {
            out.print(report.toText(MAX_LISTED_VIOLATIONS));
        }
        out.flush();
        return report.passed() ? 0 : 1;
    }

    private void requireRange(String option, int value, int min, int max) {
        if (value < min || value > max) {
            throw new ParameterException(spec.commandLine(), "Invalid value for option '" + option + "': " + value
                    + " is outside [" + min + ", " + max + "]");
        }
    }

    /** {@code frontend} or {@code backend}, case-insensitive. */
    static final class TargetConverter implements CommandLine.ITypeConverter<Drill.Target> {
        @Override
        public Drill.Target convert(String value) {
            for (Drill.Target t : Drill.Target.values()) {
                if (t.cliName().equalsIgnoreCase(value)) {
                    return t;
                }
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not a process to kill "
                    + "(expected frontend, backend, mirror or zookeeper)");
        }
    }
}
