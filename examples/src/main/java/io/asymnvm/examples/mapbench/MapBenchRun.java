package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.KeyValueStoreImpl;
import io.asymnvm.examples.support.BenchRig;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.CommitSections;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.RunCounts;
import me.tongfei.progressbar.DelegatingProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

import java.util.Objects;

/**
 * One {@code bench map} run: the persistent structure first (a fresh backend and frontend, the structure opened by
 * name through a {@link KeyValueStore}, loaded, warmed up, measured, torn down), then the volatile baseline under
 * the same driver, loaded, warmed up and measured with the same seed. Progress bars go to standard error.
 */
public final class MapBenchRun {
    static final String STRUCTURE_NAME = "bench-map";

    private final MapBenchConfig config;
    private final boolean progress;

    public MapBenchRun(MapBenchConfig config, boolean progress) {
        this.config = Objects.requireNonNull(config, "config");
        this.progress = progress;
    }

    public MapBenchReport run() {
        MapBenchConfig c = config;
        MapBenchDriver driver = new MapBenchDriver(c.keys(), c.valueBytes());
        ZipfianGenerator keyChooser = new ZipfianGenerator(c.keys(), c.theta());

        long loadNanos;
        MapBenchPhase structure;
        EngineStats delta;
        EngineStats loadDelta;
        RunCounts.Snapshot runs;
        CommitSections.Snapshot sections;
        try (BenchRig rig = BenchRig.start(c.fabric(), c.mode(), c.pmBytes(), c.cacheBytes(), "asymnvm-bench-map-")) {
            AsymNvm nvm = rig.nvm();
            KeyValueStore store = nvm.transactional(KeyValueStore.class,
                    new KeyValueStoreImpl(nvm, c.structure(), STRUCTURE_NAME));
            MapTarget target = MapTarget.persistent(c.structure(), store);
            EngineStats start = nvm.stats();
            try (ProgressBar bar = bar("load " + c.structure().cliName(), c.keys())) {
                loadNanos = driver.load(target, c.loadBatch(), bar::stepBy);
            }
            loadDelta = minus(nvm.stats(), start);
            EngineStats before;
            RunCounts.Snapshot runsBefore;
            try (ProgressBar bar = bar("run " + c.structure().cliName(), c.warmupOps() + c.ops())) {
                driver.run(target, c.workload(), keyChooser, c.warmupOps(), c.threads(), c.seed() + 1, bar::stepBy,
                        Long.MAX_VALUE, c.disjoint());
                before = nvm.stats();
                runsBefore = nvm.runCounts();
                CommitSections.Snapshot sectionsBefore = nvm.commitSections();
                structure = driver.run(target, c.workload(), keyChooser, c.ops(), c.threads(), c.seed(),
                        bar::stepBy, Long.MAX_VALUE, c.disjoint());
                sections = nvm.commitSections().minus(sectionsBefore);
            }
            delta = minus(nvm.stats(), before);
            runs = nvm.runCounts().minus(runsBefore);
        }

        MapTarget baselineTarget = MapTarget.baseline(c.structure());
        long baselineLoadNanos = driver.load(baselineTarget, c.loadBatch(), n -> { });
        driver.run(baselineTarget, c.workload(), keyChooser, c.warmupOps(), c.threads(), c.seed() + 1, n -> { },
                Long.MAX_VALUE, c.disjoint());
        MapBenchPhase baseline = driver.run(baselineTarget, c.workload(), keyChooser, c.ops(), c.threads(),
                c.seed(), n -> { }, Long.MAX_VALUE, c.disjoint());
        return new MapBenchReport(c, loadNanos, loadDelta, structure, baselineLoadNanos, baseline, delta, runs,
                sections);
    }

    private ProgressBar bar(String task, long max) {
        ProgressBarBuilder b = new ProgressBarBuilder().setTaskName(task).setInitialMax(max)
                .setStyle(ProgressBarStyle.ASCII).setUpdateIntervalMillis(500).showSpeed();
        if (!progress) {
            b.setConsumer(new DelegatingProgressBarConsumer(s -> { }));
        }
        return b.build();
    }

    private static EngineStats minus(EngineStats a, EngineStats b) {
        return new EngineStats(a.commits() - b.commits(), a.readOnly() - b.readOnly(), a.aborts() - b.aborts(),
                a.retries() - b.retries(), a.commitRoundTrips() - b.commitRoundTrips(),
                a.fetchRoundTrips() - b.fetchRoundTrips(), a.controlRoundTrips() - b.controlRoundTrips(),
                a.backgroundRoundTrips() - b.backgroundRoundTrips(), a.redoBatches() - b.redoBatches(),
                a.reconnects() - b.reconnects(), a.lastTxId(), a.durableTxId(), a.appliedTxId(),
                a.slabGrants() - b.slabGrants(), a.verifyRoundTrips() - b.verifyRoundTrips(),
                a.slabReturns() - b.slabReturns(), a.failovers() - b.failovers(), a.failoverDetectMillis(),
                a.failoverResumeMillis(), a.locklessAttempts() - b.locklessAttempts(),
                a.locklessConflicts() - b.locklessConflicts(), a.locklessFallbacks() - b.locklessFallbacks(),
                a.locklessWrites() - b.locklessWrites(), a.optimisticAttempts() - b.optimisticAttempts(),
                a.optimisticConflicts() - b.optimisticConflicts(), a.optimisticFallbacks() - b.optimisticFallbacks());
    }
}
