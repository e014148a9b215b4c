package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.commit.FabricKind;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.frontend.ExecutionMode;

import java.util.Objects;

/**
 * One {@code bench map} run: the structure and fabric, the data set ({@code keys} keys of {@code valueBytes}
 * bytes, loaded {@code loadBatch} per transaction), the operations ({@code ops} of {@code workload} over
 * {@code threads} threads after {@code warmupOps} unrecorded ones, zipfian with {@code theta}, seeded), and the
 * PM image and page cache sizes, and the frontend's mode; with {@code disjoint}, thread {@code i} of {@code T}
 * uses only keys {@code ≡ i (mod T)} (updates to disjoint keys, issue 8 goal 2) (the design or the naive baseline). {@link #estimatedDataBytes()} and the size defaults live here.
 */
public record MapBenchConfig(StructureKind structure, FabricKind fabric, int keys, long ops, Workload workload,
                             int threads, int valueBytes, double theta, long seed, int loadBatch, long warmupOps,
                             long pmBytes, long cacheBytes, ExecutionMode mode, boolean disjoint) {
    /** Smallest PM image and page cache the defaults pick. */
    public static final long MIN_PM_BYTES = 256L << 20;
    public static final long MIN_CACHE_BYTES = 64L << 20;

    public MapBenchConfig {
        Objects.requireNonNull(structure, "structure");
        Objects.requireNonNull(fabric, "fabric");
        Objects.requireNonNull(workload, "workload");
        Objects.requireNonNull(mode, "mode");
    }

    /** Threads choosing among all keys (not {@code --disjoint}). */
    public MapBenchConfig(StructureKind structure, FabricKind fabric, int keys, long ops, Workload workload,
                          int threads, int valueBytes, double theta, long seed, int loadBatch, long warmupOps,
                          long pmBytes, long cacheBytes, ExecutionMode mode) {
        this(structure, fabric, keys, ops, workload, threads, valueBytes, theta, seed, loadBatch, warmupOps, pmBytes,
                cacheBytes, mode, false);
    }

    /** A run of the design ({@link ExecutionMode#ASYMNVM}). */
    public MapBenchConfig(StructureKind structure, FabricKind fabric, int keys, long ops, Workload workload,
                          int threads, int valueBytes, double theta, long seed, int loadBatch, long warmupOps,
                          long pmBytes, long cacheBytes) {
        this(structure, fabric, keys, ops, workload, threads, valueBytes, theta, seed, loadBatch, warmupOps, pmBytes,
                cacheBytes, ExecutionMode.ASYMNVM);
    }

    /** Key and value bytes of the data set plus per-record overhead in a node (header, slot). */
    public static long estimatedDataBytes(int keys, int valueBytes) {
        int keyBytes = ("user" + (keys - 1)).length();
        return (long) keys * (keyBytes + valueBytes + 6);
    }

    /**
     * A PM image for the data set: 8x its bytes (nodes are 50..100% full, replaced values leave garbage until
     * compaction, blobs and logs take their share) plus 256 MiB; 1 GiB and more from about 1M keys of 100 bytes.
     */
    public static long defaultPmBytes(int keys, int valueBytes) {
        return roundUpToMiB(Math.max(MIN_PM_BYTES, 8 * estimatedDataBytes(keys, valueBytes) + (256L << 20)));
    }

    /** A page cache holding the whole structure (3x the data set plus 64 MiB), so the run measures hits. */
    public static long defaultCacheBytes(int keys, int valueBytes) {
        return roundUpToMiB(Math.max(MIN_CACHE_BYTES, 3 * estimatedDataBytes(keys, valueBytes) + (64L << 20)));
    }

    private static long roundUpToMiB(long bytes) {
        long mib = 1L << 20;
        return (bytes + mib - 1) / mib * mib;
    }
}
