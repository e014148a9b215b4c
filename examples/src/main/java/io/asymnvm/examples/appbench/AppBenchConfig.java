package io.asymnvm.examples.appbench;

import io.asymnvm.examples.commit.FabricKind;

import java.util.Objects;

/**
 * One application benchmark run: the fabric, the threads, the measured and warm-up seconds, the population's size
 * (TATP's subscribers, SmallBank's accounts) and the seed of the population and of the threads' randoms. Checked
 * completely here, so a bad value fails before anything is created.
 */
public record AppBenchConfig(FabricKind fabric, int threads, double seconds, double warmupSeconds, long scale,
                             long seed) {
    public static final int MAX_THREADS = 256;
    public static final double MAX_SECONDS = 3600;
    public static final long MAX_SCALE = 10_000_000;

    public AppBenchConfig {
        Objects.requireNonNull(fabric, "fabric");
        requireRange("threads", threads, 1, MAX_THREADS);
        if (!(seconds > 0 && seconds <= MAX_SECONDS)) {
            throw new IllegalArgumentException("seconds outside (0, " + MAX_SECONDS + "]: " + seconds);
        }
        if (!(warmupSeconds >= 0 && warmupSeconds <= MAX_SECONDS)) {
            throw new IllegalArgumentException("warm-up seconds outside [0, " + MAX_SECONDS + "]: " + warmupSeconds);
        }
    }

    /** Checks the population size against {@code min} (the application's smallest) and {@link #MAX_SCALE}. */
    public AppBenchConfig requireScale(String what, long min) {
        requireRange(what, scale, min, MAX_SCALE);
        return this;
    }

    private static void requireRange(String what, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(what + " outside [" + min + ", " + max + "]: " + value);
        }
    }

    /** A PM image for {@code scale} units of {@code bytesPerUnit}: four times the data plus 256 MiB, whole MiB. */
    public static long pmBytes(long scale, long bytesPerUnit) {
        return roundUpToMiB(4 * scale * bytesPerUnit + (256L << 20));
    }

    /** A page cache holding the whole population: twice the data plus 64 MiB, whole MiB. */
    public static long cacheBytes(long scale, long bytesPerUnit) {
        return roundUpToMiB(2 * scale * bytesPerUnit + (64L << 20));
    }

    private static long roundUpToMiB(long bytes) {
        long mib = 1L << 20;
        return (bytes + mib - 1) / mib * mib;
    }
}
