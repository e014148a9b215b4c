package io.asymnvm.examples.putbench;

import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.examples.support.Json;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * What {@code bench puts} prints: the three targets' rates and latencies, the ratios (computed from the rates as
 * printed, so that {@code ratio_floor == ops_per_s / floor_ops_per_s} holds on the printed numbers up to the
 * ratio's four decimals), and the PM bytes the backend persisted during the measured phase per logical byte put:
 * {@code pm_bytes_per_logical_byte} counts the redo rings and the heap image (issue 8 goal 7); the semantic ring
 * (the commit records, which carry the put's arguments) and the rest (checkpoints, watermarks) are reported beside
 * it. {@code pm_written_bytes_per_logical_byte} counts what reached those two areas through stores (the redo WRITE
 * once, the replayer's heap stores), without the widening and repetition of persist calls: the media write
 * amplification on memory written back line by line. {@code pm_syncs_per_put} counts the backend's write-back
 * calls (each an msync of the image file, so on a block device one device cache flush) per put.
 */
public record PutsBenchReport(PutsBenchConfig config, PutsPhase asymNvm, PutsPhase floor, PutsPhase mapDb,
                              long logicalBytes, Map<Kind, Long> persisted, Map<Kind, Long> written,
                              long syncs, PutsEngineCounts engine) {
    public PutsBenchReport {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(engine, "engine");
        persisted = Map.copyOf(persisted);
        written = Map.copyOf(written);
    }

    private static BigDecimal rate(PutsPhase p) {
        return Json.decimal(p.opsPerSecond(), 1);
    }

    private static double ratio(BigDecimal a, BigDecimal b) {
        return b.signum() == 0 ? 0 : a.doubleValue() / b.doubleValue();
    }

    /** Bytes persisted in {@code kind}'s area per logical byte put. */
    public double perLogicalByte(Kind kind) {
        return logicalBytes == 0 ? 0 : (double) persisted.get(kind) / logicalBytes;
    }

    /** Redo ring and heap image bytes persisted per logical byte put. */
    public double pmBytesPerLogicalByte() {
        return logicalBytes == 0 ? 0 : (double) (persisted.get(Kind.REDO) + persisted.get(Kind.HEAP)) / logicalBytes;
    }

    /** Redo ring and heap image bytes stored per logical byte put. */
    public double writtenBytesPerLogicalByte() {
        return logicalBytes == 0 ? 0 : (double) (written.get(Kind.REDO) + written.get(Kind.HEAP)) / logicalBytes;
    }

    public String toJson() {
        BigDecimal ops = rate(asymNvm);
        BigDecimal floorOps = rate(floor);
        BigDecimal mapDbOps = rate(mapDb);
        return Json.write(Json.object()
                .put("fabric", config.fabric().cliName())
                .put("threads", config.threads())
                .put("value_size", config.valueSize())
                .put("keys", config.keys())
                .put("hot_keys", config.hotKeys())
                .put("seconds", config.seconds())
                .put("ops_per_s", ops)
                .put("floor_ops_per_s", floorOps)
                .put("mapdb_ops_per_s", mapDbOps)
                .put("ratio_floor", Json.decimal(ratio(ops, floorOps), 4))
                .put("ratio_mapdb", Json.decimal(ratio(ops, mapDbOps), 4))
                .put("p50_us", Json.decimal(asymNvm.p50Micros(), 3))
                .put("p99_us", Json.decimal(asymNvm.p99Micros(), 3))
                .put("floor_p50_us", Json.decimal(floor.p50Micros(), 3))
                .put("mapdb_p50_us", Json.decimal(mapDb.p50Micros(), 3))
                .put("puts", asymNvm.puts())
                .put("logical_bytes", logicalBytes)
                .put("pm_redo_bytes", persisted.get(Kind.REDO))
                .put("pm_heap_bytes", persisted.get(Kind.HEAP))
                .put("pm_semantic_bytes", persisted.get(Kind.SEMANTIC))
                .put("pm_other_bytes", persisted.get(Kind.OTHER))
                .put("pm_bytes_per_logical_byte", Json.decimal(pmBytesPerLogicalByte(), 4))
                .put("semantic_bytes_per_logical_byte", Json.decimal(perLogicalByte(Kind.SEMANTIC), 4))
                .put("pm_written_redo_bytes", written.get(Kind.REDO))
                .put("pm_written_heap_bytes", written.get(Kind.HEAP))
                .put("pm_written_bytes_per_logical_byte", Json.decimal(writtenBytesPerLogicalByte(), 4))
                .put("pm_syncs_per_put", Json.decimal(engine.per(syncs, engine.commits()), 3))
                .put("commit_round_trips_per_put", Json.decimal(engine.per(engine.commitRoundTrips(), engine.commits()), 4))
                .put("flushes_per_put", Json.decimal(engine.per(engine.flushes(), engine.commits()), 4))
                .put("puts_per_redo_batch", Json.decimal(engine.per(engine.commits(), engine.redoBatches()), 2))
                .put("retries_per_put", Json.decimal(engine.per(engine.retries(), engine.commits()), 4))
                .setAll(asymNvm.cpu().putPerOp(Json.object(), "cpu_", asymNvm.puts())));
    }

    public String toText() {
        BigDecimal ops = rate(asymNvm);
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "durable puts over the %s fabric: %d thread(s), %d-byte values, %d %skeys,"
                        + " %d s measured per target%n", config.fabric().cliName(), config.threads(),
                config.valueSize(), config.keys(), config.hotKeys() ? "hot " : "", config.seconds()));
        b.append(String.format(Locale.ROOT, "  %-40s %12s %10s %10s %8s%n", "target", "puts/s", "p50 us", "p99 us",
                "ratio"));
        line(b, "AsymNVM hash map, SYNC tx per put", asymNvm, ops);
        line(b, "floor: append + force (mmap)", floor, ops);
        line(b, "MapDB 3.1 HTreeMap, WAL, commit per put", mapDb, ops);
        b.append(String.format(Locale.ROOT, "  PM bytes persisted per logical byte: %.3f (redo %.3f + heap %.3f);"
                        + " semantic ring %.3f, other %.3f%n", pmBytesPerLogicalByte(), perLogicalByte(Kind.REDO),
                perLogicalByte(Kind.HEAP), perLogicalByte(Kind.SEMANTIC), perLogicalByte(Kind.OTHER)));
        b.append(String.format(Locale.ROOT, "  PM bytes stored per logical byte:    %.3f (redo ring and heap image)%n",
                writtenBytesPerLogicalByte()));
        b.append(String.format(Locale.ROOT, "  per put: %.3f FLUSHes posted, %.3f commit waits, %.4f re-runs; %.1f puts"
                        + " per redo batch%n", engine.per(engine.flushes(), engine.commits()),
                engine.per(engine.commitRoundTrips(), engine.commits()),
                engine.per(engine.retries(), engine.commits()), engine.per(engine.commits(), engine.redoBatches())));
        return b.toString();
    }

    /** One row; the ratio column is AsymNVM's rate over this row's (1 on AsymNVM's own row). */
    private static void line(StringBuilder b, String name, PutsPhase p, BigDecimal asymNvmOps) {
        b.append(String.format(Locale.ROOT, "  %-40s %12.1f %10.1f %10.1f %8.3f%n", name, p.opsPerSecond(),
                p.p50Micros(), p.p99Micros(), ratio(asymNvmOps, rate(p))));
    }
}
