package io.asymnvm.examples.tatp;

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
 * {@code bench tatp}: populates {@code scale} subscribers ({@value #POPULATE_BATCH} per transaction), runs the mix
 * unmeasured for the warm-up, then measured, and reports throughput, latency and the per-type counts. Also the
 * {@code tatp} workload of the comparison matrix.
 */
public final class TatpBench implements ReportWorkload {
    /** Subscribers populated per transaction. */
    public static final int POPULATE_BATCH = 32;
    /** Smallest population (the non-uniform draw needs a few subscribers to mean anything). */
    public static final long MIN_SUBSCRIBERS = 10;
    /** Bytes of PM and cache a subscriber's rows take, roughly (about ten rows with their slots and headers). */
    static final long BYTES_PER_SUBSCRIBER = 2048;
    /** Subscribers of the matrix's runs, quick or not. */
    static final long REPORT_SUBSCRIBERS = 100_000;
    static final long QUICK_SUBSCRIBERS = 500;

    @Override
    public String name() {
        return "tatp";
    }

    @Override
    public ReportResult run(ReportRun run) {
        AppBenchConfig config = new AppBenchConfig(FabricKind.parse(run.fabric()), run.threads(), run.seconds(),
                run.quick() ? 0.2 : 2, run.quick() ? QUICK_SUBSCRIBERS : REPORT_SUBSCRIBERS, 42);
        return run(config, line -> { }).toReportResult();
    }

    /** Runs one benchmark; {@code progress} receives a line per phase. */
    public static AppBenchReport run(AppBenchConfig config, Consumer<String> progress) {
        Objects.requireNonNull(progress, "progress");
        config.requireScale("subscribers", MIN_SUBSCRIBERS);
        long subscribers = config.scale();
        try (AppRig rig = AppRig.start(config.fabric(), AppBenchConfig.pmBytes(subscribers, BYTES_PER_SUBSCRIBER),
                AppBenchConfig.cacheBytes(subscribers, BYTES_PER_SUBSCRIBER), "asymnvm-bench-tatp-")) {
            Tatp tatp = rig.nvm().transactional(Tatp.class, new TatpImpl(rig.nvm()));
            progress.accept("populating " + subscribers + " subscribers");
            long loadStart = System.nanoTime();
            populate(tatp, subscribers, config.seed());
            long loadNanos = System.nanoTime() - loadStart;
            MixDriver driver = new MixDriver(new TatpMix(tatp, subscribers), config.threads());
            if (config.warmupSeconds() > 0) {
                progress.accept("warming up for " + config.warmupSeconds() + " s");
                driver.run(config.warmupSeconds(), config.seed() + 1);
            }
            progress.accept("measuring for " + config.seconds() + " s on " + config.threads() + " threads");
            EngineStats before = rig.nvm().stats();
            MixPhase phase = driver.run(config.seconds(), config.seed() + 2);
            EngineStats after = rig.nvm().stats();
            TatpCounts counts = tatp.counts();
            return AppBenchReport.of("tatp", config.fabric().cliName(), config.threads(), config.seconds(),
                    "subscribers", subscribers, loadNanos, phase, before, after,
                    checks(counts));
        }
    }

    private static Map<String, Object> checks(TatpCounts counts) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("subscriber_rows", counts.subscribers());
        m.put("call_forwarding_rows", counts.callForwardings());
        return m;
    }

    /** Populates subscribers 1..{@code subscribers}, {@link #POPULATE_BATCH} per transaction; returns the rows. */
    public static long populate(Tatp tatp, long subscribers, long seed) {
        long rows = 0;
        for (long first = 1; first <= subscribers; first += POPULATE_BATCH) {
            rows += tatp.populate(first, (int) Math.min(POPULATE_BATCH, subscribers - first + 1), seed);
        }
        return rows;
    }
}
