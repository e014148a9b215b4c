package io.asymnvm.examples.commit;

import io.asymnvm.frontend.tx.EngineStats;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * Measures single-thread SYNC commit latency against the fabric's raw persisted-write round trip, interleaved
 * in alternating blocks of {@value #BLOCK} samples so that both see the same machine (JIT state, CPU frequency,
 * background load). A warm-up phase runs the same loop unrecorded. Round trips per commit come from the
 * engine's exact counters over the measured phase, not from timing.
 */
public final class CommitLatencyRun {
    /** Samples of one kind before switching to the other. */
    public static final int BLOCK = 100;
    private static final int SIGNIFICANT_DIGITS = 3;

    private final CommitRig rig;
    private long nextValue = 1;
    // --- busy-polled loopback round trip (issue 8, goal 5); null: not measured ---
    private final SpinLoopbackProbe spinProbe;
    private Histogram spinRtts;

    public CommitLatencyRun(CommitRig rig) {
        this(rig, null);
    }

    /** With {@code spinProbe}, a third block of busy-polled loopback round trips joins the interleaving. */
    public CommitLatencyRun(CommitRig rig, SpinLoopbackProbe spinProbe) {
        this.rig = rig;
        this.spinProbe = spinProbe;
    }

    /** Runs {@code warmupNanos} unrecorded, then {@code measureNanos} recorded. */
    public CommitReport run(long warmupNanos, long measureNanos) {
        Histogram commits = new Histogram(SIGNIFICANT_DIGITS);
        Histogram rtts = new Histogram(SIGNIFICANT_DIGITS);
        spinRtts = new Histogram(SIGNIFICANT_DIGITS);
        loop(warmupNanos, new Histogram(SIGNIFICANT_DIGITS), new Histogram(SIGNIFICANT_DIGITS));
        spinRtts = spinProbe == null ? null : new Histogram(SIGNIFICANT_DIGITS);
        EngineStats before = rig.stats();
        long start = System.nanoTime();
        loop(measureNanos, commits, rtts);
        long elapsed = System.nanoTime() - start;
        EngineStats after = rig.stats();
        long committed = after.commits() - before.commits();
        long roundTrips = after.commitRoundTrips() - before.commitRoundTrips();
        if (committed != commits.getTotalCount()) {
            throw new IllegalStateException("engine counted " + committed + " commits, the harness timed "
                    + commits.getTotalCount());
        }
        return new CommitReport(rig.kind(), elapsed / (double) TimeUnit.SECONDS.toNanos(1), commits, rtts,
                committed, committed == 0 ? Double.NaN : roundTrips / (double) committed,
                after.backgroundRoundTrips() - before.backgroundRoundTrips(),
                after.redoBatches() - before.redoBatches(), spinRtts);
    }

    private void loop(long durationNanos, Histogram commits, Histogram rtts) {
        long end = System.nanoTime() + durationNanos;
        while (System.nanoTime() < end) {
            for (int i = 0; i < BLOCK; i++) {
                long t0 = System.nanoTime();
                rig.rawRoundTrip();
                rtts.recordValue(System.nanoTime() - t0);
            }
            for (int i = 0; i < BLOCK; i++) {
                long value = nextValue++;
                long t0 = System.nanoTime();
                rig.commit(value);
                commits.recordValue(System.nanoTime() - t0);
            }
            if (spinProbe != null) {
                spinBlock();
            }
        }
    }

    /** One block of busy-polled round trips; the first, which wakes the echo thread, is not recorded. */
    private void spinBlock() {
        spinProbe.begin();
        try {
            spinProbe.roundTrip();
            for (int i = 0; i < BLOCK; i++) {
                long t0 = System.nanoTime();
                spinProbe.roundTrip();
                spinRtts.recordValue(System.nanoTime() - t0);
            }
        } finally {
            spinProbe.end();
        }
    }
}
