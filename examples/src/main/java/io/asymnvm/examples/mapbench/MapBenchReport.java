package io.asymnvm.examples.mapbench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.examples.support.Json;
import io.asymnvm.frontend.tx.CommitSections;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.RunCounts;

import java.util.Locale;

/**
 * What one {@code bench map} run measured: the load and the measured phase of the persistent structure, the same
 * of its volatile baseline, and what the frontend engine did during the structure's measured phase, with the
 * distribution of attempts per call in it ({@code runs}) and the optimistic writers' commit sections (the ordering
 * lock's hold and wait times).
 */
public record MapBenchReport(MapBenchConfig config, long loadNanos, EngineStats loadDelta,
                             MapBenchPhase structure,
                             long baselineLoadNanos, MapBenchPhase baseline, EngineStats engineDelta,
                             RunCounts.Snapshot runs, CommitSections.Snapshot commitSections) {

    public double opsPerSecond() {
        return structure.opsPerSecond();
    }

    public double baselineOpsPerSecond() {
        return baseline.opsPerSecond();
    }

    /** Structure throughput over baseline throughput. */
    public double ratio() {
        double b = baselineOpsPerSecond();
        return b == 0 ? Double.NaN : opsPerSecond() / b;
    }

    /** Reads that found no value (in either target): a correctness failure. */
    public long missing() {
        return structure.missing() + baseline.missing();
    }

    /** One JSON object, keys in a fixed order, every value a number. */
    public String toJson() {
        ObjectNode json = Json.object()
                .put("ops_per_s", Json.decimal(opsPerSecond(), 1))
                .put("p50_us", Json.decimal(structure.p50Micros(), 3))
                .put("p99_us", Json.decimal(structure.p99Micros(), 3))
                .put("baseline_ops_per_s", Json.decimal(baselineOpsPerSecond(), 1))
                .put("ratio", Json.decimal(ratio(), 5))
                .put("runs_per_tx", Json.decimal(engineDelta.runsPerTransaction(), 4))
                .put("runs_per_tx_p50", runs.percentile(0.5))
                .put("runs_per_tx_p99", runs.percentile(0.99))
                .put("runs_per_tx_max", runs.max())
                .put("fetch_reads", engineDelta.fetchRoundTrips())
                .put("lockless_attempts", engineDelta.locklessAttempts())
                .put("lockless_conflicts", engineDelta.locklessConflicts())
                .put("lockless_fallbacks", engineDelta.locklessFallbacks())
                .put("optimistic_attempts", engineDelta.optimisticAttempts())
                .put("optimistic_conflicts", engineDelta.optimisticConflicts())
                .put("optimistic_fallbacks", engineDelta.optimisticFallbacks())
                .put("conflicts_per_tx", Json.decimal(engineDelta.conflictsPerTransaction(), 4))
                .put("commit_lock_hold_us", Json.decimal(commitSections.holdMicrosPerSection(), 3))
                .put("commit_lock_wait_us", Json.decimal(commitSections.waitMicrosPerSection(), 3))
                .put("commit_lock_busy", Json.decimal(structure.nanos() == 0 ? 0
                        : commitSections.holdNanos() / (double) structure.nanos(), 4));
        structure.cpu().putPerOp(json, "cpu_", structure.ops());
        return Json.write(json);
    }

    /** A few aligned lines for people. */
    public String toText() {
        MapBenchConfig c = config;
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "map benchmark: %s over the %s fabric%s, workload %s, zipfian theta "
                        + "%.2f%n", c.structure().displayName(), c.fabric().cliName(),
                c.mode() == io.asymnvm.frontend.ExecutionMode.NAIVE ? " in naive mode" : "", c.workload().describe(),
                c.theta()));
        b.append(String.format(Locale.ROOT, "  %,d keys of %d-byte values, %,d ops (+%,d warm-up) on %d thread%s%s, "
                        + "seed %d, PM %d MiB, page cache %d MiB%n", c.keys(), c.valueBytes(), c.ops(),
                c.warmupOps(), c.threads(), c.threads() == 1 ? "" : "s",
                c.disjoint() ? " (disjoint keys)" : "", c.seed(), c.pmBytes() >> 20,
                c.cacheBytes() >> 20));
        b.append(String.format(Locale.ROOT, "  load %-18s %8.2f s  %,12.0f keys/s (%d per transaction)%n",
                structure.target(), loadNanos / 1e9, c.keys() * 1e9 / Math.max(1, loadNanos), c.loadBatch()));
        b.append(engine("load", loadDelta));
        b.append(String.format(Locale.ROOT, "  load %-18s %8.2f s  %,12.0f keys/s%n",
                baseline.target(), baselineLoadNanos / 1e9, c.keys() * 1e9 / Math.max(1, baselineLoadNanos)));
        b.append(phase(structure));
        b.append(phase(baseline));
        b.append(String.format(Locale.ROOT, "  ratio (structure / baseline ops/s)  %.5f%n", ratio()));
        b.append(engine("run ", engineDelta));
        b.append(String.format(Locale.ROOT, "       runs per call during the run: p50 %d, p99 %d, max %d%n",
                runs.percentile(0.5), runs.percentile(0.99), runs.max()));
        if (missing() > 0) {
            b.append(String.format(Locale.ROOT, "  FAILED: %,d reads found no value (%s %,d, %s %,d)%n", missing(),
                    structure.target(), structure.missing(), baseline.target(), baseline.missing()));
        }
        return b.toString();
    }

    private static String engine(String phase, EngineStats e) {
        return String.format(Locale.ROOT, "       frontend during the %s %,d commits, %.3f round trips per commit, "
                        + "%,d re-executions (%.4f runs per transaction), %,d page fetches, %,d redo batches, "
                        + "%,d lockless read attempts (%,d conflicts, %,d fell back to the lock), "
                        + "%,d optimistic writer attempts (%,d conflicts, %,d fell back to the lock)%n", phase + ":",
                e.commits(), e.commits() == 0 ? 0.0 : e.commitRoundTrips() / (double) e.commits(), e.retries(),
                e.runsPerTransaction(), e.fetchRoundTrips(), e.redoBatches(), e.locklessAttempts(),
                e.locklessConflicts(), e.locklessFallbacks(), e.optimisticAttempts(), e.optimisticConflicts(),
                e.optimisticFallbacks());
    }

    private static String phase(MapBenchPhase p) {
        return String.format(Locale.ROOT, "  run  %-18s %8.2f s  %,12.0f ops/s   p50 %9.2f us   p99 %9.2f us   "
                        + "(%,d reads, %,d updates)%n", p.target(), p.nanos() / 1e9, p.opsPerSecond(), p.p50Micros(),
                p.p99Micros(), p.reads(), p.updates());
    }
}
