package io.asymnvm.examples.report;

import java.util.Map;
import java.util.Objects;
import org.HdrHistogram.Histogram;

/**
 * What a {@link ReportWorkload} measured in its timed phase.
 *
 * @param operations   operations (transactions) completed in the timed phase, by all threads together
 * @param elapsedNanos wall-clock length of the timed phase
 * @param latencyNanos latency of each completed operation in nanoseconds (may hold fewer values than
 *                     {@code operations} if the workload samples); the report draws its CDF
 * @param metrics      further figures the workload wants in the JSON (e.g. {@code "abort_rate"}), may be empty
 */
public record ReportResult(long operations, long elapsedNanos, Histogram latencyNanos, Map<String, Double> metrics) {
    public ReportResult {
        if (operations < 0) {
            throw new IllegalArgumentException("operations must not be negative: " + operations);
        }
        if (elapsedNanos <= 0) {
            throw new IllegalArgumentException("elapsed time must be positive: " + elapsedNanos + " ns");
        }
        Objects.requireNonNull(latencyNanos, "latencyNanos");
        metrics = Map.copyOf(metrics);
    }

    /** A result without extra metrics. */
    public ReportResult(long operations, long elapsedNanos, Histogram latencyNanos) {
        this(operations, elapsedNanos, latencyNanos, Map.of());
    }

    /** Throughput of the timed phase. */
    public double opsPerSecond() {
        return operations * 1e9 / elapsedNanos;
    }

    /** A fresh histogram of the range every row uses: 100 ns to 60 s, 3 significant digits. */
    public static Histogram newLatencyHistogram() {
        return new Histogram(100, 60_000_000_000L, 3);
    }
}
