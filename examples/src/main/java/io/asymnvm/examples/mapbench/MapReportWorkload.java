package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.KeyValueStoreImpl;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;
import io.asymnvm.examples.support.BenchRig;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.ExecutionMode;
import io.asymnvm.frontend.tx.EngineStats;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A {@code bench report} row driven by {@code bench map}'s own driver and rig: a persistent B+tree or hash map
 * (this project, over a fabric, in the design's or the naive mode) or a volatile {@code TreeMap}+lock /
 * {@code ConcurrentHashMap}, loaded with {@link ReportRun#records()} keys of {@value #VALUE_BYTES}-byte values,
 * then a zipfian read/update mix for the run's seconds. A read that finds no value fails the row.
 */
public final class MapReportWorkload implements ReportWorkload {
    /** Value size of every map row (bench map's default). */
    public static final int VALUE_BYTES = 100;
    private static final int LOAD_BATCH = 100;

    private final StructureKind structure;
    private final FabricKind fabric;
    private final ExecutionMode mode;
    private final Workload workload;
    private final boolean persistent;

    private MapReportWorkload(StructureKind structure, FabricKind fabric, ExecutionMode mode, Workload workload,
                              boolean persistent) {
        this.structure = Objects.requireNonNull(structure, "structure");
        this.fabric = fabric;
        this.mode = mode;
        this.workload = Objects.requireNonNull(workload, "workload");
        this.persistent = persistent;
    }

    /** This project's {@code structure} over {@code fabric} in {@code mode}. */
    public static MapReportWorkload persistent(StructureKind structure, FabricKind fabric, ExecutionMode mode,
                                               Workload workload) {
        return new MapReportWorkload(structure, Objects.requireNonNull(fabric, "fabric"),
                Objects.requireNonNull(mode, "mode"), workload, true);
    }

    /** The volatile map {@code bench map} compares {@code structure} with (TreeMap+lock, ConcurrentHashMap). */
    public static MapReportWorkload volatileBaseline(StructureKind structure, Workload workload) {
        return new MapReportWorkload(structure, null, null, workload, false);
    }

    @Override
    public String name() {
        String prefix = "map-" + workload.cliName() + "/";
        if (!persistent) {
            return prefix + MapTarget.baseline(structure).name();
        }
        return prefix + structure.cliName() + "/" + (mode == ExecutionMode.NAIVE ? "naive-" : "") + fabric.cliName();
    }

    @Override
    public ReportResult run(ReportRun run) {
        MapBenchDriver driver = new MapBenchDriver(run.records(), VALUE_BYTES);
        ZipfianGenerator keys = new ZipfianGenerator(run.records(), ZipfianGenerator.DEFAULT_THETA);
        if (!persistent) {
            return measure(driver, keys, MapTarget.baseline(structure), run, null);
        }
        try (BenchRig rig = BenchRig.start(fabric, mode, MapBenchConfig.defaultPmBytes(run.records(), VALUE_BYTES),
                MapBenchConfig.defaultCacheBytes(run.records(), VALUE_BYTES), "asymnvm-bench-report-")) {
            AsymNvm nvm = rig.nvm();
            KeyValueStore store = nvm.transactional(KeyValueStore.class,
                    new KeyValueStoreImpl(nvm, structure, MapBenchRun.STRUCTURE_NAME));
            return measure(driver, keys, MapTarget.persistent(structure, store), run, nvm);
        }
    }

    private ReportResult measure(MapBenchDriver driver, ZipfianGenerator keys, MapTarget target, ReportRun run,
                                 AsymNvm nvm) {
        driver.load(target, LOAD_BATCH, n -> { });
        if (run.warmupSeconds() > 0) {
            driver.run(target, workload, keys, Long.MAX_VALUE, run.threads(), run.seed() + 1, n -> { },
                    nanos(run.warmupSeconds()));
        }
        EngineStats before = nvm == null ? null : nvm.stats();
        MapBenchPhase phase = driver.run(target, workload, keys, Long.MAX_VALUE, run.threads(), run.seed(),
                n -> { }, nanos(run.seconds()));
        if (phase.missing() > 0) {
            throw new IllegalStateException(name() + ": " + phase.missing() + " reads found no value");
        }
        Map<String, Double> metrics = Map.of("value_bytes", (double) VALUE_BYTES);
        if (nvm != null) {
            EngineStats after = nvm.stats();
            long tx = after.commits() - before.commits() + after.readOnly() - before.readOnly();
            long remote = after.fetchRoundTrips() - before.fetchRoundTrips() + after.commitRoundTrips()
                    - before.commitRoundTrips() + after.controlRoundTrips() - before.controlRoundTrips();
            metrics = Map.of("value_bytes", (double) VALUE_BYTES,
                    "round_trips_per_op", tx == 0 ? 0.0 : remote / (double) tx);
        }
        return new ReportResult(phase.ops(), Math.max(1, phase.nanos()), phase.latencyNanos(), metrics);
    }

    private static long nanos(double seconds) {
        return (long) (seconds * TimeUnit.SECONDS.toNanos(1));
    }
}
