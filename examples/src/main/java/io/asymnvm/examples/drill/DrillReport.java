package io.asymnvm.examples.drill;

import io.asymnvm.examples.support.Json;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The outcome of a drill. Counters are filled by {@link Drill} as it goes.
 *
 * <ul>
 *   <li>{@code acknowledged}: transfers whose call returned (ACK); {@code aborted}: refused for insufficient
 *       funds; {@code inDoubtCommitted} / {@code inDoubtNotCommitted}: the one transfer a killed worker had begun
 *       but not acknowledged, found applied / not applied after recovery (both are correct outcomes).</li>
 *   <li>{@code verifications}: times the bank was read back after a recovery and compared with the oracle.
 *       {@code lost}: verifications whose balances differ from the oracle (and from the oracle plus the in-doubt
 *       transfer) while the total is intact: acknowledged transfers are missing. {@code partial}: verifications
 *       whose total changed: part of a transfer is visible. {@code inspections}: {@code asymnvm inspect} runs
 *       over the PM file after each kill (its problems are violations). {@code earlyKills}: restarted processes
 *       killed again before they reported ready (during JVM start, attach or recovery).</li>
 *   <li>{@code violations}: every failed check, one message each: lost and partial verifications, outcomes the
 *       oracle did not predict, children that hung past the iteration deadline, died or reported errors.</li>
 *   <li>recovery times: per iteration, the restarted worker's open + recover time (frontend kills) or the
 *       restarted backend's spawn-to-LISTENING time, JVM start included (backend kills).</li>
 * </ul>
 */
public final class DrillReport {
    private final Drill.Target target;
    private final long seed;
    private final int accounts;
    private final int plannedIterations;
    int iterations;
    long acknowledged;
    long aborted;
    long inDoubtCommitted;
    long inDoubtNotCommitted;
    long verifications;
    long inspections;
    /** {@code inspect --deep} runs (allocator and structures walked): after each backend kill, and at the end. */
    long deepInspections;
    long earlyKills;
    long lost;
    long partial;
    long recoveredTransactions;
    // ---- ZooKeeper loss (--kill zookeeper) ----
    /** Acknowledgements read while ZooKeeper was down (the backend kept serving its epoch). */
    long commitsWhileZkDown;
    /** A mirror that served as backend while ZooKeeper was down, or a configuration changed before it was back. */
    long promotionsWithoutQuorum;
    /** Promotions after ZooKeeper came back (one per backend kill). */
    long promotions;
    final List<String> violations = new ArrayList<>();
    /** The scratch directory when it was kept, else null. */
    String keptDirectory;
    private final List<Double> recoveryMillis = new ArrayList<>();
    /** Permanent backend loss: SIGKILL to the first commit on the promoted mirror, and its split. */
    private final List<Double> failoverMillis = new ArrayList<>();
    private final List<Double> reconfiguredMillis = new ArrayList<>();
    private final List<Double> resumeMillis = new ArrayList<>();

    DrillReport(Drill.Target target, long seed, int accounts, int plannedIterations) {
        this.target = target;
        this.seed = seed;
        this.accounts = accounts;
        this.plannedIterations = plannedIterations;
    }

    void recovery(double millis) {
        recoveryMillis.add(millis);
    }

    /** One failover (wall-clock millis): killed, configuration changed, first commit on the promoted mirror. */
    void failover(long killedMillis, long reconfiguredMillis, long resumedMillis) {
        failoverMillis.add((double) (resumedMillis - killedMillis));
        this.reconfiguredMillis.add((double) (reconfiguredMillis - killedMillis));
        resumeMillis.add((double) (resumedMillis - reconfiguredMillis));
    }

    private static double p50(List<Double> values) {
        if (values.isEmpty()) {
            return 0;
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted[(sorted.length + 1) / 2 - 1];
    }

    private static double max(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    void violation(String message) {
        violations.add(message);
    }

    public int iterations() {
        return iterations;
    }

    public long acknowledged() {
        return acknowledged;
    }

    public long lost() {
        return lost;
    }

    public long partial() {
        return partial;
    }

    /** The kept scratch directory, or null. */
    public String keptDirectory() {
        return keptDirectory;
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }

    public boolean passed() {
        return violations.isEmpty() && iterations == plannedIterations;
    }

    /** Median recovery time (nearest rank), 0 without samples. */
    public double recoveryMillisP50() {
        if (recoveryMillis.isEmpty()) {
            return 0;
        }
        double[] sorted = recoveryMillis.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted[(sorted.length + 1) / 2 - 1];
    }

    public double recoveryMillisMax() {
        return recoveryMillis.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    public double failoverMillisP50() {
        return p50(failoverMillis);
    }

    public double failoverMillisMax() {
        return max(failoverMillis);
    }

    /** One flat JSON object: the keys first, then details. */
    public String toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = Json.object()
                .put("iterations", iterations)
                .put("acknowledged", acknowledged)
                .put("lost", lost)
                .put("partial", partial)
                .put("violations", violations.size());
        if (target == Drill.Target.ZOOKEEPER) {
            o.put("commits_while_zk_down", commitsWhileZkDown)
                    .put("promotions_without_quorum", promotionsWithoutQuorum)
                    .put("promotions", promotions);
        }
        if (!failoverMillis.isEmpty()) {
            // backend: SIGKILL to the first commit on the promoted mirror, split at the configuration's change
            // (detection + promotion's compare-and-set) and the rest (serving step + the frontend's resume);
            // mirror: SIGKILL to the first commit without it, split at the configuration dropping it
            o.put("failover_ms_p50", Json.decimal(failoverMillisP50(), 3))
                    .put("failover_ms_max", Json.decimal(failoverMillisMax(), 3))
                    .put("reconfigured_ms_p50", Json.decimal(p50(reconfiguredMillis), 3))
                    .put("reconfigured_ms_max", Json.decimal(max(reconfiguredMillis), 3))
                    .put("resume_ms_p50", Json.decimal(p50(resumeMillis), 3))
                    .put("resume_ms_max", Json.decimal(max(resumeMillis), 3));
        }
        return Json.write(o
                .put("recovery_ms_p50", Json.decimal(recoveryMillisP50(), 3))
                .put("recovery_ms_max", Json.decimal(recoveryMillisMax(), 3))
                .put("verifications", verifications)
                .put("aborted", aborted)
                .put("in_doubt_committed", inDoubtCommitted)
                .put("in_doubt_not_committed", inDoubtNotCommitted)
                .put("recovered_transactions", recoveredTransactions)
                .put("inspections", inspections)
                .put("deep_inspections", deepInspections)
                .put("early_kills", earlyKills)
                .put("seed", seed));
    }

    /** The summary for people; violations listed (at most {@code maxListed}). */
    public String toText(int maxListed) {
        StringBuilder b = new StringBuilder();
        String what = target == Drill.Target.FRONTEND ? "worker open + recover" : "backend spawn to LISTENING";
        b.append(String.format(Locale.ROOT, "drill: SIGKILL %s, %d of %d iterations, seed %d, bank of %d accounts%n",
                target.cliName(), iterations, plannedIterations, seed, accounts));
        b.append(String.format(Locale.ROOT, "  transfers: %,d acknowledged, %,d aborted (insufficient funds); "
                + "in doubt at a kill: %d found committed, %d not%n", acknowledged, aborted, inDoubtCommitted,
                inDoubtNotCommitted));
        b.append(String.format(Locale.ROOT, "  verifications: %d, lost %d, partial %d; PM file inspected after %d "
                + "kills (%d of them of a restarted process before it was ready), heap walked (--deep) after %d%n",
                verifications, lost, partial, inspections, earlyKills, deepInspections));
        b.append(String.format(Locale.ROOT, "  recovery (%s): p50 %.1f ms, max %.1f ms over %d restarts%s%n", what,
                recoveryMillisP50(), recoveryMillisMax(), recoveryMillis.size(),
                target == Drill.Target.FRONTEND ? String.format(Locale.ROOT, "; %,d transactions re-executed",
                        recoveredTransactions) : ""));
        if (!failoverMillis.isEmpty()) {
            b.append(String.format(Locale.ROOT, "  failover (SIGKILL to the first commit %s): "
                    + "p50 %.1f ms, max %.1f ms; configuration changed after p50 %.1f ms, frontend resumed %.1f ms "
                    + "later (p50)%n", target == Drill.Target.MIRROR ? "without the mirror" : "on the promoted mirror",
                    failoverMillisP50(), failoverMillisMax(), p50(reconfiguredMillis),
                    p50(resumeMillis)));
        }
        if (target == Drill.Target.ZOOKEEPER) {
            b.append(String.format(Locale.ROOT, "  ZooKeeper down: %,d commits acknowledged meanwhile; %d promotions "
                    + "without a quorum; %d promotions after it was back%n", commitsWhileZkDown,
                    promotionsWithoutQuorum, promotions));
        }
        b.append(String.format(Locale.ROOT, "  violations: %d%n", violations.size()));
        violations.stream().limit(maxListed).forEach(v -> b.append("    ").append(v.replace("\n", "\n    "))
                .append('\n'));
        if (violations.size() > maxListed) {
            b.append(String.format(Locale.ROOT, "    ... and %d more%n", violations.size() - maxListed));
        }
        if (keptDirectory != null) {
            b.append("  kept ").append(keptDirectory).append(" (PM file, logs, transcripts of every child's output)\n");
        }
        b.append(passed() ? "drill: PASSED" : "drill: FAILED").append('\n');
        return b.toString();
    }

    @Override
    public String toString() {
        return toJson() + " " + Arrays.toString(violations.toArray());
    }
}
