package io.asymnvm.examples.recovery;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.examples.bank.Bank;
import io.asymnvm.examples.bank.BankImpl;
import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.support.Json;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.tx.TransactionEngine.RecoveryReport;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Frontend recovery time for N semantic records after the backend's applied transaction L (DESIGN §4).
 *
 * <p>A backend node in this JVM with {@value #RING_BYTES}-byte rings; frontend 0 over the local fabric opens a
 * bank, makes everything so far applied ({@code sync()}: L = its last transaction), then commits N one-unit
 * transfers with redo kept in its buffer (batches of up to 2^20 transactions or 16 MiB, shipped after 10 s at the latest), so
 * none of them reaches the backend's image; then it crashes ({@code nvm.crash()}). A new incarnation of frontend 0
 * connects over the chosen fabric (timed: attach, the backend's ring scan), registers the bank and runs
 * {@code recover()} (timed: reading the N records and re-executing them). The recovered bank is checked against
 * the expected balances. Up to {@value #MAX_RECORDS} records fit (redo of more would be shipped by size). This
 * is repeated (the bank carries on) and the medians are reported.
 *
 * <p>The same is done once before, unreported, as frontend {@value #WARMUP_FRONTEND_ID} with
 * {@value #WARMUP_RECORDS} records, so the measured recovery runs JIT-compiled code over warm connections (a
 * recovering process's cold start is what {@code asymnvm drill --kill frontend} reports).
 */
public final class FrontendRecoveryRun {
    public static final int MAX_RECORDS = 120_000;
    static final long RING_BYTES = 64L << 20;
    static final int ACCOUNTS = 16;
    static final int FRONTEND_ID = 0;
    static final int WARMUP_FRONTEND_ID = 1;
    static final int WARMUP_RECORDS = 5_000;
    /** Transfers move one unit round the accounts, so no balance falls below this minus one. */
    static final long INITIAL_BALANCE = 1_000_000;
    private static final String HOST = "127.0.0.1";

    /**
     * The outcome: medians over {@code repetitions} crashes (recover time, open time), the slowest recover time;
     * {@code commitSeconds} is how long the N commits took (they must beat the 10 s redo delay).
     */
    public record Report(int records, int recovered, FabricKind fabric, double openMillis, double recoverMillis,
                         double commitSeconds, int repetitions, double recoverMillisMax) {
        public double transactionsPerSecond() {
            return recoverMillis <= 0 ? 0 : recovered / (recoverMillis / 1000.0);
        }

        public String toJson() {
            return Json.write(Json.object()
                    .put("records", records)
                    .put("recovered", recovered)
                    .put("open_ms", Json.decimal(openMillis, 3))
                    .put("recover_ms", Json.decimal(recoverMillis, 3))
                    .put("transactions_per_s", Json.decimal(transactionsPerSecond(), 0))
                    .put("commit_s", Json.decimal(commitSeconds, 3))
                    .put("repetitions", repetitions)
                    .put("recover_ms_max", Json.decimal(recoverMillisMax, 3)));
        }

        public String toText() {
            return String.format(Locale.ROOT, "frontend recovery of %,d semantic records after the applied "
                            + "transaction (%s fabric), median of %d crashes%n"
                            + "  open (attach, backend ring scan)   %10.1f ms%n"
                            + "  recover() (read + re-execute)      %10.1f ms   %,.0f transactions/s   (max %.1f ms)%n"
                            + "  re-executed                        %,10d transactions (committed in %.2f s)%n",
                    records, fabric.cliName(), repetitions, openMillis, recoverMillis, transactionsPerSecond(),
                    recoverMillisMax, recovered, commitSeconds);
        }
    }

    private FrontendRecoveryRun() {
    }

    public static Report run(int records, FabricKind fabric, int repetitions) {
        if (records < 1 || records > MAX_RECORDS) {
            throw new IllegalArgumentException("records must be in [1, " + MAX_RECORDS + "]: " + records);
        }
        if (repetitions < 1) {
            throw new IllegalArgumentException("repetitions must be positive: " + repetitions);
        }
        Path dir = ScratchDirectory.create("asymnvm-bench-recovery-");
        BackendConfiguration config = BackendConfiguration.builder(dir.resolve("backend.pm")).size(512L << 20)
                .maxFrontends(2).semRingCapacity(RING_BYTES).redoRingCapacity(RING_BYTES)
                .port(fabric.backendPort()).conclude();
        try (BackendNode node = BackendNode.start(config)) {
            once(node, WARMUP_FRONTEND_ID, WARMUP_RECORDS, fabric); // JIT and connections warm, not reported
            Report[] runs = new Report[repetitions];
            for (int i = 0; i < repetitions; i++) {
                runs[i] = once(node, FRONTEND_ID, records, fabric);
            }
            Report[] byRecover = runs.clone();
            java.util.Arrays.sort(byRecover, java.util.Comparator.comparingDouble(Report::recoverMillis));
            Report median = byRecover[(repetitions + 1) / 2 - 1];
            double[] opens = java.util.Arrays.stream(runs).mapToDouble(Report::openMillis).sorted().toArray();
            return new Report(records, median.recovered(), fabric, opens[(repetitions + 1) / 2 - 1],
                    median.recoverMillis(), median.commitSeconds(), repetitions,
                    byRecover[repetitions - 1].recoverMillis());
        } finally {
            ScratchDirectory.delete(dir);
        }
    }

    private static Report once(BackendNode node, int frontendId, int records, FabricKind fabric) {
        FrontendOptions options = FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
        long[] expected = new long[ACCOUNTS];
        double commitSeconds;
        AsymNvm first = AsymNvm.open(node.localFabric(), frontendId, options);
        try {
            Bank bank = first.transactional(Bank.class, new BankImpl());
            bank.open(ACCOUNTS, INITIAL_BALANCE); // a bank left by an earlier repetition stays as it is
            for (int a = 0; a < ACCOUNTS; a++) {
                expected[a] = bank.balance(a);
            }
            first.sync();
            long start = System.nanoTime();
            for (int i = 0; i < records; i++) {
                int from = i % ACCOUNTS;
                int to = (i + 1) % ACCOUNTS;
                bank.transfer(from, to, 1);
                expected[from]--;
                expected[to]++;
            }
            commitSeconds = (System.nanoTime() - start) / 1e9;
        } finally {
            first.crash();
        }
        long t0 = System.nanoTime();
        AsymNvm second = fabric == FabricKind.TCP
                ? AsymNvm.connect(HOST, node.port(), frontendId, options.withCredentials(node.credentialsFile()))
                : AsymNvm.open(node.localFabric(), frontendId, options);
        try {
            Bank bank = second.transactional(Bank.class, new BankImpl());
            long t1 = System.nanoTime();
            RecoveryReport r = second.recover();
            long t2 = System.nanoTime();
            int recovered = r.transactions();
            if (recovered != records) {
                throw new IllegalStateException("recovery re-executed " + recovered + " transactions, expected "
                        + records + " (was redo shipped before the crash? the commits took " + commitSeconds + " s)");
            }
            for (int a = 0; a < ACCOUNTS; a++) {
                long actual = bank.balance(a);
                if (actual != expected[a]) {
                    throw new IllegalStateException("after recovery account " + a + " holds " + actual
                            + ", expected " + expected[a]);
                }
            }
            return new Report(records, recovered, fabric, (t1 - t0) / 1e6, (t2 - t1) / 1e6, commitSeconds, 1,
                    (t2 - t1) / 1e6);
        } finally {
            second.close();
        }
    }
}
