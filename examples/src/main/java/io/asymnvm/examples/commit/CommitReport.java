package io.asymnvm.examples.commit;

import io.asymnvm.examples.support.Json;
import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * What one commit-latency run measured: commit and raw round-trip latencies (nanoseconds, HdrHistogram), the
 * number of measured commits, the round trips the engine waited per commit, and what the frontend did off the
 * commit path meanwhile (redo batches shipped, background round trips of its agent thread). With a SYNC mirror,
 * {@code replication} is non-null and the commits are the replicated frontend's. With the busy-polled loopback probe,
 * {@code busyRttNanos} is non-null (see {@link BusyLoopbackProbe}).
 */
public record CommitReport(FabricKind fabric, double seconds, Histogram commitNanos, Histogram rttNanos,
                           long commits, double roundTripsPerCommit, long backgroundRoundTrips,
                           long redoBatches, Replication replication, Histogram busyRttNanos) {

    /**
     * The same run's unreplicated commits (another frontend on the same backend, in alternating blocks) and the
     * FLUSHes the replicated frontend posted per commit to the backend and to the mirror.
     */
    public record Replication(Histogram unreplicatedNanos, double backendFlushesPerCommit,
                              double mirrorFlushesPerCommit) {
    }

    public CommitReport(FabricKind fabric, double seconds, Histogram commitNanos, Histogram rttNanos, long commits,
                        double roundTripsPerCommit, long backgroundRoundTrips, long redoBatches) {
        this(fabric, seconds, commitNanos, rttNanos, commits, roundTripsPerCommit, backgroundRoundTrips,
                redoBatches, null, null);
    }

    /** Without the busy-polled loopback round trip. */
    public CommitReport(FabricKind fabric, double seconds, Histogram commitNanos, Histogram rttNanos, long commits,
                        double roundTripsPerCommit, long backgroundRoundTrips, long redoBatches,
                        Replication replication) {
        this(fabric, seconds, commitNanos, rttNanos, commits, roundTripsPerCommit, backgroundRoundTrips,
                redoBatches, replication, null);
    }

    /** Busy-polled loopback round trip p50 (see {@link BusyLoopbackProbe}); NaN when not measured. */
    public double busyRttP50Micros() {
        return busyRttNanos == null || busyRttNanos.getTotalCount() == 0 ? Double.NaN : micros(busyRttNanos, 50);
    }

    /** Commit p50 over the busy-polled loopback round trip p50 (issue 8 goal 5, with SPIN waiting: at most 1.2). */
    public double ratioBusyRtt() {
        double rtt = busyRttP50Micros();
        return rtt == 0 || Double.isNaN(rtt) ? Double.NaN : commitP50Micros() / rtt;
    }

    /** Unreplicated commit p50 of the same run (with a mirror only). */
    public double unreplicatedP50Micros() {
        return micros(replication.unreplicatedNanos(), 50);
    }

    /** Replicated commit p50 over unreplicated commit p50 (with a mirror only). */
    public double replicationRatio() {
        double u = unreplicatedP50Micros();
        return u == 0 ? Double.NaN : commitP50Micros() / u;
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

    /** One JSON object, keys in a fixed order, every value a number; the busy-loopback keys only when measured. */
    public String toJson() {
        return Json.write(json());
    }

    /** As {@link #toJson()}, plus {@code transport}: the tcp transport that ran ({@code epoll}, {@code nio}) or local. */
    public String toJson(String transport) {
        return Json.write(json().put("transport", transport));
    }

    private com.fasterxml.jackson.databind.node.ObjectNode json() {
        var o = Json.object()
                .put("commit_p50_us", Json.decimal(commitP50Micros(), 3))
                .put("commit_p99_us", Json.decimal(commitP99Micros(), 3))
                .put("rtt_p50_us", Json.decimal(rttP50Micros(), 3))
                .put("ratio", Json.decimal(ratio(), 4))
                .put("round_trips_per_commit", Json.decimal(roundTripsPerCommit, 4))
                .put("commits", commits);
        if (replication != null) {
            o.put("mirrors", 1)
                    .put("unreplicated_p50_us", Json.decimal(unreplicatedP50Micros(), 3))
                    .put("replication_ratio", Json.decimal(replicationRatio(), 4))
                    .put("backend_flushes_per_commit", Json.decimal(replication.backendFlushesPerCommit(), 4))
                    .put("mirror_flushes_per_commit", Json.decimal(replication.mirrorFlushesPerCommit(), 4));
        }
        if (!Double.isNaN(busyRttP50Micros())) {
            o.put("loopback_busy_rtt_us", Json.decimal(busyRttP50Micros(), 3))
                    .put("ratio_busy_rtt", Json.decimal(ratioBusyRtt(), 4));
        }
        return o;
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
        if (!Double.isNaN(busyRttP50Micros())) {
            b.append(String.format(Locale.ROOT, "  busy-polled loopback (64 B) p50 %9.1f us   %,d samples; commit p50 / it "
                    + "%.2f%n", busyRttP50Micros(), busyRttNanos.getTotalCount(), ratioBusyRtt()));
        }
        b.append(String.format(Locale.ROOT, "  round trips waited per commit   %.4f%n", roundTripsPerCommit));
        if (replication != null) {
            b.append(String.format(Locale.ROOT,
                    "  unreplicated commit      p50 %9.1f us   (commits above: 1 SYNC mirror)%n",
                    unreplicatedP50Micros()));
            b.append(String.format(Locale.ROOT, "  replication ratio (p50 / unreplicated p50)  %.3f%n",
                    replicationRatio()));
            b.append(String.format(Locale.ROOT, "  FLUSHes per commit      backend %.4f   mirror %.4f%n",
                    replication.backendFlushesPerCommit(), replication.mirrorFlushesPerCommit()));
        }
        b.append(String.format(Locale.ROOT, "  off the commit path             %,d redo batches, %,d background round "
                + "trips%n", redoBatches, backgroundRoundTrips));
        return b.toString();
    }
}
