package io.asymnvm.examples.putbench;

import io.asymnvm.examples.commit.FabricKind;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One {@code bench puts} run: the fabric, the value size, the threads, the measured and warm-up seconds of each of
 * the three targets, the key set (uniformly chosen among {@code keys} keys; a handful with {@code hotKeys}), and the
 * directory that holds the backend's PM file, the floor's file and MapDB's files (one file system for all three).
 */
public record PutsBenchConfig(FabricKind fabric, int valueSize, int threads, int seconds, int warmupSeconds,
                              int keys, boolean hotKeys, Path pmDir, long pmBytes) {
    /** Keys of a {@code --hot-keys} run: few enough that a redo batch holds many writes of each. */
    public static final int HOT_KEYS = 16;
    /** Smallest PM image the default picks. */
    public static final long MIN_PM_BYTES = 512L << 20;
    /** Size of the floor's file (a ring of records, see {@code FloorPuts}). */
    public static final long FLOOR_FILE_BYTES = 64L << 20;
    /** Smallest PM image {@code --pm-size} accepts (two frontends' rings and some slabs). */
    public static final long SMALLEST_PM_BYTES = 128L << 20;

    public PutsBenchConfig {
        Objects.requireNonNull(fabric, "fabric");
        Objects.requireNonNull(pmDir, "pmDir");
    }

    /** The key of index {@code i}: {@code "user" + i}, ASCII (its length is its byte count). */
    public static String key(int i) {
        return "user" + i;
    }

    /**
     * A PM image for {@code keys} values of {@code valueSize} bytes: three times the data (replaced values are freed
     * only after their transaction, slabs are granted whole) plus 256 MiB for rings and metadata, at least 512 MiB.
     */
    public static long defaultPmBytes(int keys, int valueSize) {
        long data = (long) keys * (valueSize + 64);
        long mib = 1L << 20;
        return Math.max(MIN_PM_BYTES, (3 * data + (256L << 20) + mib - 1) / mib * mib);
    }
}
