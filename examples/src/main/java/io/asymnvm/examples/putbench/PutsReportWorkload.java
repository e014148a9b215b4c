package io.asymnvm.examples.putbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.report.ReportResult;
import io.asymnvm.examples.report.ReportRun;
import io.asymnvm.examples.report.ReportWorkload;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A {@code bench report} row driven by {@code bench puts}' own timed driver: durable puts of
 * {@code valueSize}-byte values under keys chosen uniformly among {@link ReportRun#records()}, into this project's
 * hash map (a backend in this JVM, local or tcp), the raw floor (append + force), MapDB (WAL, a transaction per
 * put) or Chronicle Map (fdatasync per put, or no sync). Every file goes under the run's scratch directory.
 */
public final class PutsReportWorkload implements ReportWorkload {
    /** The stores a puts row can measure. */
    public enum Store {
        ASYMNVM_LOCAL, ASYMNVM_TCP, FLOOR, MAPDB_WAL, CHRONICLE_MSYNC, CHRONICLE_NOSYNC;

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private final Store store;
    private final int valueSize;

    public PutsReportWorkload(Store store, int valueSize) {
        this.store = Objects.requireNonNull(store, "store");
        if (valueSize < 1 || valueSize > FloorPuts.MAX_RECORD_BYTES / 2) {
            throw new IllegalArgumentException("puts value size outside [1, " + FloorPuts.MAX_RECORD_BYTES / 2
                    + "]: " + valueSize);
        }
        this.valueSize = valueSize;
    }

    @Override
    public String name() {
        return "puts/" + store.label();
    }

    @Override
    public ReportResult run(ReportRun run) throws Exception {
        TimedPuts driver = new TimedPuts(run.records(), valueSize, run.threads());
        PutsPhase phase;
        switch (store) {
            case ASYMNVM_LOCAL, ASYMNVM_TCP -> {
                FabricKind fabric = store == Store.ASYMNVM_TCP ? FabricKind.TCP : FabricKind.LOCAL;
                try (AsymNvmPutsRig rig = AsymNvmPutsRig.start(fabric, run.scratchDirectory(),
                        PutsBenchConfig.defaultPmBytes(run.records(), valueSize))) {
                    phase = measure(driver, rig.store()::put, run);
                }
            }
            case FLOOR -> phase = measure(driver, new FloorPuts(run.scratchDirectory().resolve("floor.log"),
                    (int) Math.round(driver.logicalBytesPerPut())), run);
            case MAPDB_WAL -> {
                try (MapDbPuts mapDb = new MapDbPuts(run.scratchDirectory().resolve("mapdb.db"))) {
                    phase = measure(driver, mapDb, run);
                }
            }
            case CHRONICLE_MSYNC, CHRONICLE_NOSYNC -> {
                try (ChronicleMapPuts chronicle = new ChronicleMapPuts(run.scratchDirectory().resolve("chronicle.dat"),
                        run.records(), valueSize, store == Store.CHRONICLE_MSYNC)) {
                    phase = measure(driver, chronicle, run);
                }
            }
            default -> throw new IllegalStateException("unknown store " + store);
        }
        return new ReportResult(phase.puts(), Math.max(1, phase.nanos()), phase.latency(),
                Map.of("value_bytes", (double) valueSize));
    }

    private static PutsPhase measure(TimedPuts driver, PutTarget target, ReportRun run) {
        driver.run(target, run.warmupSeconds(), run.seed() + 1);
        return driver.run(target, run.seconds(), run.seed());
    }
}
