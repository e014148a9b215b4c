package io.asymnvm.examples.putbench;

import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.examples.support.ScratchDirectory;
import io.asymnvm.frontend.tx.EngineStats;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * One {@code bench puts} run, three targets one after the other in a fresh scratch directory under the configured
 * one (so all three write to the same file system), each warmed up and then measured with the same driver, threads,
 * value size and key set: the AsymNVM hash map (a backend in this JVM), the floor, MapDB. Around AsymNVM's measured
 * phase the frontend ships all redo and the backend applies it ({@link AsymNvmPutsRig#drain()}), so the persisted
 * bytes counted between the two drains are exactly those of the measured puts. The scratch directory is deleted at
 * the end, whatever happens.
 */
public final class PutsBenchRun {
    private final PutsBenchConfig config;
    private final Consumer<String> progress;

    /** {@code progress} receives one line as each phase starts (standard error in the command). */
    public PutsBenchRun(PutsBenchConfig config, Consumer<String> progress) {
        this.config = Objects.requireNonNull(config, "config");
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    public PutsBenchReport run() {
        PutsBenchConfig c = config;
        Path dir = ScratchDirectory.createIn(c.pmDir(), "asymnvm-bench-puts-");
        try {
            TimedPuts driver = new TimedPuts(c.keys(), c.valueSize(), c.threads());
            PutsPhase asymNvm;
            PutsEngineCounts engine;
            Map<Kind, Long> persisted = new EnumMap<>(Kind.class);
            Map<Kind, Long> written = new EnumMap<>(Kind.class);
            long syncs;
            progress.accept("AsymNVM over " + c.fabric().cliName() + " ...");
            try (AsymNvmPutsRig rig = AsymNvmPutsRig.start(c.fabric(), dir, c.pmBytes())) {
                PutStore store = rig.store();
                PutTarget target = store::put;
                driver.run(target, c.warmupSeconds(), 1);
                rig.drain();
                Map<Kind, Long> before = rig.persisted();
                Map<Kind, Long> writtenBefore = rig.written();
                EngineStats statsBefore = rig.stats();
                long flushesBefore = rig.flushesPosted();
                long syncsBefore = rig.syncs();
                asymNvm = driver.run(target, c.seconds(), 2);
                rig.drain();
                syncs = rig.syncs() - syncsBefore;
                Map<Kind, Long> after = rig.persisted();
                Map<Kind, Long> writtenAfter = rig.written();
                EngineStats statsAfter = rig.stats();
                engine = new PutsEngineCounts(statsAfter.commits() - statsBefore.commits(),
                        statsAfter.commitRoundTrips() - statsBefore.commitRoundTrips(),
                        rig.flushesPosted() - flushesBefore,
                        statsAfter.redoBatches() - statsBefore.redoBatches(),
                        statsAfter.retries() - statsBefore.retries());
                for (Kind k : Kind.values()) {
                    persisted.put(k, after.get(k) - before.get(k));
                    written.put(k, writtenAfter.get(k) - writtenBefore.get(k));
                }
            }

            progress.accept("floor: append + force ...");
            int record = (int) Math.round(driver.logicalBytesPerPut());
            FloorPuts floorTarget = new FloorPuts(dir.resolve("floor.log"), record);
            driver.run(floorTarget, c.warmupSeconds(), 1);
            PutsPhase floor = driver.run(floorTarget, c.seconds(), 2);

            progress.accept("MapDB ...");
            PutsPhase mapDb;
            try (MapDbPuts mapDbTarget = new MapDbPuts(dir.resolve("mapdb.db"))) {
                driver.run(mapDbTarget, c.warmupSeconds(), 1);
                mapDb = driver.run(mapDbTarget, c.seconds(), 2);
            }
            return new PutsBenchReport(c, asymNvm, floor, mapDb, asymNvm.bytes(), persisted, written, syncs,
                    engine);
        } finally {
            ScratchDirectory.delete(dir);
        }
    }
}
