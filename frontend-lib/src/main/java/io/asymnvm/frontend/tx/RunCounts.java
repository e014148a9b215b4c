package io.asymnvm.frontend.tx;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many attempts (runs of the method body) each call took: a histogram of small counts, kept without a lock.
 * A call that hit every page runs once; one that missed pages runs again after they were fetched (issue 8 goal 4,
 * {@link MissCollector}). Counts above {@value #MAX_EXACT} share the last bucket; the largest is kept apart.
 *
 * <p>Every call records here, read-only ones on several cores at once: the buckets are striped counters and the
 * largest count is written only when it grows, so two readers that both ran once share no written cache line
 * (before: one atomic counter per bucket and a compare-and-set of the maximum on every call, two writes to lines
 * every reader shares).
 */
public final class RunCounts {
    static final int MAX_EXACT = 64;

    private final LongAdder[] counts = new LongAdder[MAX_EXACT + 1];
    private final AtomicLong max = new AtomicLong();

    public RunCounts() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    void record(int runs) {
        if (runs <= 0) {
            return; // refused before it ran (bad arguments)
        }
        counts[Math.min(runs, MAX_EXACT)].increment();
        if (runs > max.get()) {
            max.accumulateAndGet(runs, Math::max);
        }
    }

    Snapshot snapshot() {
        long[] c = new long[MAX_EXACT + 1];
        for (int i = 0; i < c.length; i++) {
            c[i] = counts[i].sum();
        }
        return new Snapshot(c, max.get());
    }

    /**
     * Calls by their number of runs: {@code counts[r]} calls ran r times ({@code counts[64]}: 64 or more), and
     * the largest number of runs seen.
     */
    public record Snapshot(long[] counts, long max) {
        /** The calls counted here and not in {@code earlier} (the same engine, read before). */
        public Snapshot minus(Snapshot earlier) {
            long[] c = counts.clone();
            for (int i = 0; i < c.length; i++) {
                c[i] -= earlier.counts[i];
            }
            int top = c.length - 1;
            while (top > 0 && c[top] == 0) {
                top--;
            }
            return new Snapshot(c, top == c.length - 1 ? max : top);
        }

        public long calls() {
            long n = 0;
            for (long x : counts) {
                n += x;
            }
            return n;
        }

        /** The smallest number of runs that {@code fraction} of the calls did not exceed (0 without calls). */
        public int percentile(double fraction) {
            if (fraction <= 0 || fraction > 1) {
                throw new IllegalArgumentException("percentile fraction " + fraction + " outside (0, 1]");
            }
            long n = calls();
            if (n == 0) {
                return 0;
            }
            long rank = (long) Math.ceil(fraction * n);
            long seen = 0;
            for (int r = 0; r < counts.length; r++) {
                seen += counts[r];
                if (seen >= rank) {
                    return r;
                }
            }
            return counts.length - 1;
        }
    }
}
