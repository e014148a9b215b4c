package io.asymnvm.examples.appbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * An application as a row of the {@code bench report} matrix, over one fabric (row name {@code tatp/asymnvm-local},
 * {@code smallbank/asymnvm-tcp}, ...): the run's records are the population (at least the application's smallest),
 * its PM file goes in the run's scratch directory, and the metrics carry the engine's and the mix's counts, each
 * type's count and user aborts, and the application's checks (booleans as 1 or 0). A check that is false fails the
 * row with an {@link IllegalStateException} naming it.
 */
public final class AppReportWorkload implements ReportWorkload {
    private final Application app;
    private final long minScale;
    private final FabricKind fabric;

    public AppReportWorkload(Application app, long minScale, FabricKind fabric) {
        this.app = Objects.requireNonNull(app, "app");
        this.minScale = minScale;
        this.fabric = Objects.requireNonNull(fabric, "fabric");
    }

    @Override
    public String name() {
        return app.name() + "/asymnvm-" + fabric.cliName();
    }

    @Override
    public ReportResult run(ReportRun run) {
        AppBenchConfig config = new AppBenchConfig(fabric, run.threads(), run.seconds(), run.warmupSeconds(),
                Math.max(minScale, run.records()), run.seed());
        AppBenchReport report = AppBenchRun.run(app, minScale, config, run.scratchDirectory(), line -> { });
        Map<String, Double> metrics = new LinkedHashMap<>();
        MixPhase phase = report.phase();
        metrics.put(app.scaleName(), (double) report.scale());
        metrics.put("aborts", (double) report.aborts());
        metrics.put("user_aborts", (double) phase.total(Outcome.USER_ABORT));
        metrics.put("not_found", (double) phase.total(Outcome.NOT_FOUND));
        metrics.put("retries", (double) report.retries());
        metrics.put("runs_per_tx", report.runsPerTransaction());
        for (int t = 0; t < phase.types().size(); t++) {
            String type = phase.types().get(t).toLowerCase(java.util.Locale.ROOT);
            metrics.put(type + "_count", (double) phase.count(t));
            metrics.put(type + "_user_aborts", (double) phase.count(t, Outcome.USER_ABORT));
        }
        report.checks().forEach((k, v) -> {
            if (Boolean.FALSE.equals(v)) {
                throw new IllegalStateException(name() + ": check " + k + " failed: " + report.checks());
            }
            metrics.put(k, v instanceof Boolean b ? (b ? 1.0 : 0.0) : ((Number) v).doubleValue());
        });
        return new ReportResult(phase.transactions(), Math.max(1, phase.elapsedNanos()), phase.latency(), metrics);
    }
}
