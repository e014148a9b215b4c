package io.asymnvm.examples.mapbench;

import java.util.SplittableRandom;

/**
 * Zipfian-distributed item indexes in {@code [0, items)}: item 0 is the most popular, item {@code i} drawn with
 * probability proportional to {@code 1 / (i + 1)^theta}. The algorithm is Gray et al., "Quickly generating
 * billion-record synthetic databases" (SIGMOD'94), as in YCSB's {@code ZipfianGenerator}; {@link #nextScrambled}
 * spreads the popular items over the key space with an FNV-1a hash, as YCSB's {@code ScrambledZipfianGenerator}
 * does (so the hot keys are not neighbours in a B+tree).
 *
 * <p>Immutable and thread-safe: the random source is passed in, so each thread keeps its own seeded
 * {@link SplittableRandom} and a run is reproducible from its seed. Construction computes the zeta constant in
 * O(items).
 */
public final class ZipfianGenerator {
    /** YCSB's default skew. */
    public static final double DEFAULT_THETA = 0.99;

    private final long items;
    private final double theta;
    private final double zetaN;
    private final double alpha;
    private final double eta;
    private final double halfPowTheta;

    public ZipfianGenerator(long items, double theta) {
        if (items < 1) {
            throw new IllegalArgumentException("zipfian item count must be positive: " + items);
        }
        if (!(theta > 0 && theta < 1)) {
            throw new IllegalArgumentException("zipfian theta outside (0, 1): " + theta);
        }
        this.items = items;
        this.theta = theta;
        this.zetaN = zeta(items, theta);
        double zeta2 = zeta(2, theta);
        this.alpha = 1.0 / (1.0 - theta);
        this.eta = (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2 / zetaN);
        this.halfPowTheta = Math.pow(0.5, theta);
    }

    /** The sum of {@code 1 / i^theta} for {@code i = 1..n}. */
    static double zeta(long n, double theta) {
        double sum = 0;
        for (long i = 1; i <= n; i++) {
            sum += 1 / Math.pow(i, theta);
        }
        return sum;
    }

    public long items() {
        return items;
    }

    public double theta() {
        return theta;
    }

    /** The next item, 0 the most popular. */
    public long next(SplittableRandom random) {
        double u = random.nextDouble();
        double uz = u * zetaN;
        if (uz < 1.0) {
            return 0;
        }
        if (uz < 1.0 + halfPowTheta) {
            return Math.min(1, items - 1);
        }
        long item = (long) (items * Math.pow(eta * u - eta + 1, alpha));
        return Math.min(item, items - 1);
    }

    /** The next item with popularity scattered over {@code [0, items)} by a hash. */
    public long nextScrambled(SplittableRandom random) {
        return Long.remainderUnsigned(fnv1a64(next(random)), items);
    }

    /** FNV-1a over the 8 bytes of {@code value} (little-endian). */
    static long fnv1a64(long value) {
        long hash = 0xCBF29CE484222325L;
        for (int i = 0; i < 8; i++) {
            hash ^= value & 0xFF;
            hash *= 0x100000001B3L;
            value >>>= 8;
        }
        return hash;
    }
}
