package io.asymnvm.examples.commit;

import io.asymnvm.examples.support.Json;
import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * What one commit-latency run measured: commit and raw round-trip latencies (nanoseconds, HdrHistogram), the
 * number of measured commits, the round trips the engine waited per commit, and what the frontend did off the
 * commit path meanwhile (redo batches shipped, background round trips of its agent thread).
 */
public record CommitReport(FabricKind fabric, double seconds, Histogram commitNanos, Histogram rttNanos,
                           long commits, double roundTripsPerCommit, long backgroundRoundTrips,
                           long redoBatches, Histogram spinRttNanos) {
    /** Without the busy-polled loopback round trip. */
    public CommitReport(FabricKind fabric, double seconds, Histogram commitNanos, Histogram rttNanos, long commits,
                        double roundTripsPerCommit, long backgroundRoundTrips, long redoBatches) {
        this(fabric, seconds, commitNanos, rttNanos, commits, roundTripsPerCommit, backgroundRoundTrips, redoBatches,
                null);
    }

    /** Busy-polled loopback round trip p50 (see {@link SpinLoopbackProbe}); NaN when not measured. */
    public double spinRttP50Micros() {
        return spinRttNanos == null ? Double.NaN : micros(spinRttNanos, 50);
    }

    /** Commit p50 over the busy-polled loopback round trip p50 (goal with SPIN waiting: at most 1.2). */
    public double spinRatio() {
        double rtt = spinRttP50Micros();
        return rtt == 0 || Double.isNaN(rtt) ? Double.NaN : commitP50Micros() / rtt;
    }

    public double commitP50Micros() {
        return micros(commitNanos, 50);
    }

    public double commitP99Micros() {
        return micros(commitNanos, 99);
    }

    public double rttP50Micros() {
        return micros(rttNanos, 50);
    }

    public double rttP99Micros() {
        return micros(rttNanos, 99);
    }

    /** Commit p50 over raw round-trip p50: what the commit path costs above the network floor. */
    public double ratio() {
        double rtt = rttP50Micros();
        return rtt == 0 ? Double.NaN : commitP50Micros() / rtt;
    }

    private static double micros(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** One JSON object, keys in a fixed order, every value a number; spin_* keys only when measured. */
    public String toJson() {
        com.fasterxml.jackson.databind.node.ObjectNode o = Json.object();
        o
                .put("commit_p50_us", Json.decimal(commitP50Micros(), 3))
                .put("commit_p99_us", Json.decimal(commitP99Micros(), 3))
                .put("rtt_p50_us", Json.decimal(rttP50Micros(), 3))
                .put("ratio", Json.decimal(ratio(), 4))
                .put("round_trips_per_commit", Json.decimal(roundTripsPerCommit, 4))
                .put("commits", commits);
        if (spinRttNanos != null && spinRttNanos.getTotalCount() > 0) {
            o.put("spin_rtt_p50_us", Json.decimal(spinRttP50Micros(), 3))
                    .put("spin_ratio", Json.decimal(spinRatio(), 4));
        }
        return Json.write(o);
    }

    /** A few aligned lines for people. */
    public String toText() {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "commit latency over the %s fabric, %.1f s measured "
                + "(interleaved with raw round trips)%n", fabric.cliName(), seconds));
        b.append(String.format(Locale.ROOT, "  SYNC commit (1 long)     p50 %9.1f us   p99 %9.1f us   %,d commits%n",
                commitP50Micros(), commitP99Micros(), commits));
        b.append(String.format(Locale.ROOT, "  raw WRITE+FLUSH (64 B)   p50 %9.1f us   p99 %9.1f us   %,d samples%n",
                rttP50Micros(), rttP99Micros(), rttNanos.getTotalCount()));
        b.append(String.format(Locale.ROOT, "  ratio commit p50 / rtt p50      %.2f%n", ratio()));
        if (spinRttNanos != null && spinRttNanos.getTotalCount() > 0) {
            b.append(String.format(Locale.ROOT, "  busy-polled loopback (64 B)  p50 %9.1f us   %,d samples; "
                    + "commit p50 / it %.2f%n", spinRttP50Micros(), spinRttNanos.getTotalCount(), spinRatio()));
        }
        b.append(String.format(Locale.ROOT, "  round trips waited per commit   %.4f%n", roundTripsPerCommit));
        b.append(String.format(Locale.ROOT, "  off the commit path             %,d redo batches, %,d background round "
                + "trips%n", redoBatches, backgroundRoundTrips));
        return b.toString();
    }
}
