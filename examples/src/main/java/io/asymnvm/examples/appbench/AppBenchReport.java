package io.asymnvm.examples.appbench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.asymnvm.examples.support.Json;
import io.asymnvm.frontend.tx.EngineStats;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What one application benchmark run measured: the population (its scale and load time), the timed mix, what the
 * engine did meanwhile (commits, read-only calls, aborts, re-runs: differences of {@link EngineStats}), and the
 * application's own checks after the run ({@code checks}: SmallBank's money oracle), in a fixed key order.
 */
public record AppBenchReport(String app, String fabric, int threads, double seconds, String scaleName, long scale,
                             long loadNanos, MixPhase phase, long commits, long readOnly, long aborts, long retries,
                             Map<String, Object> checks) {

    public AppBenchReport {
        Objects.requireNonNull(phase, "phase");
        checks = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(Objects.requireNonNull(checks, "checks")));
    }

    /** The engine's counts over the run: {@code after - before}. */
    public static AppBenchReport of(String app, String fabric, int threads, double seconds, String scaleName,
                                    long scale, long loadNanos, MixPhase phase, EngineStats before,
                                    EngineStats after, Map<String, Object> checks) {
        return new AppBenchReport(app, fabric, threads, seconds, scaleName, scale, loadNanos, phase,
                after.commits() - before.commits(), after.readOnly() - before.readOnly(),
                after.aborts() - before.aborts(), after.retries() - before.retries(), checks);
    }

    /** Attempts per transaction the engine ran (1.0: nothing ran twice). */
    public double runsPerTransaction() {
        long transactions = commits + readOnly + aborts;
        return transactions == 0 ? 0.0 : (transactions + retries) / (double) transactions;
    }

    /** Per transaction type: {@code count}, {@code not_found}, {@code user_aborts}. */
    public Map<String, Object> perType() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int t = 0; t < phase.types().size(); t++) {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("count", phase.count(t));
            c.put("not_found", phase.count(t, Outcome.NOT_FOUND));
            c.put("user_aborts", phase.count(t, Outcome.USER_ABORT));
            m.put(phase.types().get(t), c);
        }
        return m;
    }

    /** One JSON object: the run, ops_per_s, p50_us, p99_us, the counts, per_type, then the checks. */
    public String toJson() {
        ObjectNode o = Json.object()
                .put("app", app)
                .put("fabric", fabric)
                .put("threads", threads)
                .put("seconds", seconds)
                .put(scaleName, scale)
                .put("load_s", Json.decimal(loadNanos / 1e9, 3))
                .put("transactions", phase.transactions())
                .put("ops_per_s", Json.decimal(phase.opsPerSecond(), 1))
                .put("p50_us", Json.decimal(phase.p50Micros(), 3))
                .put("p99_us", Json.decimal(phase.p99Micros(), 3))
                .put("aborts", aborts)
                .put("user_aborts", phase.total(Outcome.USER_ABORT))
                .put("not_found", phase.total(Outcome.NOT_FOUND))
                .put("commits", commits)
                .put("read_only", readOnly)
                .put("retries", retries)
                .put("runs_per_tx", Json.decimal(runsPerTransaction(), 4));
        ObjectNode types = o.putObject("per_type");
        for (int t = 0; t < phase.types().size(); t++) {
            types.putObject(phase.types().get(t))
                    .put("count", phase.count(t))
                    .put("not_found", phase.count(t, Outcome.NOT_FOUND))
                    .put("user_aborts", phase.count(t, Outcome.USER_ABORT));
        }
        checks.forEach(o::putPOJO);
        return Json.write(o);
    }

    /** A few aligned lines for people. */
    public String toText() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%s over the %s fabric: %,d %s (loaded in %.2f s), %d thread%s, %.1f s%n",
                app, fabric, scale, scaleName, loadNanos / 1e9, threads, threads == 1 ? "" : "s", seconds));
        b.append(String.format(Locale.ROOT, "  %,12.0f transactions/s   p50 %.1f us   p99 %.1f us   %,d transactions%n",
                phase.opsPerSecond(), phase.p50Micros(), phase.p99Micros(), phase.transactions()));
        b.append(String.format(Locale.ROOT, "  engine: %,d commits, %,d read-only, %,d aborts, %,d re-runs "
                + "(%.3f runs per transaction)%n", commits, readOnly, aborts, retries, runsPerTransaction()));
        for (int t = 0; t < phase.types().size(); t++) {
            long n = phase.count(t);
            b.append(String.format(Locale.ROOT, "  %-24s %,10d  %5.1f%%   not found %,d   user aborts %,d%n",
                    phase.types().get(t), n, phase.transactions() == 0 ? 0.0 : 100.0 * n / phase.transactions(),
                    phase.count(t, Outcome.NOT_FOUND), phase.count(t, Outcome.USER_ABORT)));
        }
        checks.forEach((k, v) -> b.append(String.format(Locale.ROOT, "  %s: %s%n", k, v)));
        return b.toString();
    }
}
