package io.asymnvm.examples.commit;

import io.asymnvm.frontend.tx.EngineStats;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * Measures single-thread SYNC commit latency against the fabric's raw persisted-write round trip, interleaved
 * in alternating blocks of {@value #BLOCK} samples so that both see the same machine (JIT state, CPU frequency,
 * background load). A warm-up phase runs the same loop unrecorded. Round trips per commit come from the
 * engine's exact counters over the measured phase, not from timing.
 *
 * <p>With a SYNC mirror ({@link CommitRig#mirrors()} = 1) a third block joins the rotation: the replicated
 * frontend's commits are the report's commits (and round trips per commit), the unreplicated frontend's are
 * recorded beside them, and the FLUSHes the replicated frontend posted to each node are counted over the measured
 * phase (one per node per commit when the record is posted to both and flushed in parallel).
 *
 * <p>With a {@link BusyLoopbackProbe} (issue 8, goal 5) one more block joins the rotation: the busy-polled loopback
 * round trip, the network floor a commit is compared with ({@code ratio_busy_rtt}).
 */
public final class CommitLatencyRun {
    /** Samples of one kind before switching to the other. */
    public static final int BLOCK = 100;
    private static final int SIGNIFICANT_DIGITS = 3;

    private final CommitRig rig;
    private final BusyLoopbackProbe busyProbe;
    private long nextValue = 1;

    public CommitLatencyRun(CommitRig rig) {
        this(rig, null);
    }

    /** {@code busyProbe} may be null: then no busy-polled loopback round trip is measured. */
    public CommitLatencyRun(CommitRig rig, BusyLoopbackProbe busyProbe) {
        this.rig = rig;
        this.busyProbe = busyProbe;
    }

    /** Runs {@code warmupNanos} unrecorded, then {@code measureNanos} recorded. */
    public CommitReport run(long warmupNanos, long measureNanos) {
        Histogram commits = new Histogram(SIGNIFICANT_DIGITS);
        Histogram rtts = new Histogram(SIGNIFICANT_DIGITS);
        boolean replicated = rig.mirrors() > 0;
        Histogram unreplicated = replicated ? new Histogram(SIGNIFICANT_DIGITS) : null;
        Histogram busy = busyProbe == null ? null : new Histogram(SIGNIFICANT_DIGITS);
        loop(warmupNanos, new Histogram(SIGNIFICANT_DIGITS), new Histogram(SIGNIFICANT_DIGITS),
                replicated ? new Histogram(SIGNIFICANT_DIGITS) : null,
                busyProbe == null ? null : new Histogram(SIGNIFICANT_DIGITS));
        EngineStats before = replicated ? rig.replicatedStats() : rig.stats();
        long backendFlushes = replicated ? rig.replicatedBackendFlushes() : 0;
        long mirrorFlushes = replicated ? rig.replicatedMirrorFlushes() : 0;
        long start = System.nanoTime();
        loop(measureNanos, commits, rtts, unreplicated, busy);
        long elapsed = System.nanoTime() - start;
        EngineStats after = replicated ? rig.replicatedStats() : rig.stats();
        long committed = after.commits() - before.commits();
        long roundTrips = after.commitRoundTrips() - before.commitRoundTrips();
        if (committed != commits.getTotalCount()) {
            throw new IllegalStateException("engine counted " + committed + " commits, the harness timed "
                    + commits.getTotalCount());
        }
        return new CommitReport(rig.kind(), elapsed / (double) TimeUnit.SECONDS.toNanos(1), commits, rtts,
                committed, committed == 0 ? Double.NaN : roundTrips / (double) committed,
                after.backgroundRoundTrips() - before.backgroundRoundTrips(),
                after.redoBatches() - before.redoBatches(),
                replicated ? new CommitReport.Replication(unreplicated,
                        (rig.replicatedBackendFlushes() - backendFlushes) / (double) committed,
                        (rig.replicatedMirrorFlushes() - mirrorFlushes) / (double) committed) : null,
                busy);
    }

    /** {@code unreplicated} non-null: {@code commits} are the replicated frontend's, these the other's. */
    private void loop(long durationNanos, Histogram commits, Histogram rtts, Histogram unreplicated,
            Histogram busy) {
        long end = System.nanoTime() + durationNanos;
        while (System.nanoTime() < end) {
            for (int i = 0; i < BLOCK; i++) {
                long t0 = System.nanoTime();
                rig.rawRoundTrip();
                rtts.recordValue(System.nanoTime() - t0);
            }
            if (unreplicated != null) {
                for (int i = 0; i < BLOCK; i++) {
                    long value = nextValue++;
                    long t0 = System.nanoTime();
                    rig.commit(value);
                    unreplicated.recordValue(System.nanoTime() - t0);
                }
            }
            for (int i = 0; i < BLOCK; i++) {
                long value = nextValue++;
                long t0 = System.nanoTime();
                if (unreplicated != null) {
                    rig.commitReplicated(value);
                } else {
                    rig.commit(value);
                }
                commits.recordValue(System.nanoTime() - t0);
            }
            if (busy != null) {
                busyBlock(busy);
            }
        }
    }

    /** One block of busy-polled round trips; the first, which wakes the echo thread, is not recorded. */
    private void busyBlock(Histogram busy) {
        busyProbe.begin();
        try {
            busyProbe.roundTrip();
            for (int i = 0; i < BLOCK; i++) {
                long t0 = System.nanoTime();
                busyProbe.roundTrip();
                busy.recordValue(System.nanoTime() - t0);
            }
        } finally {
            busyProbe.end();
        }
    }
}
