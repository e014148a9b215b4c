package io.asymnvm.examples.report;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One row of {@code report.json}: what a {@link ReportEntry} measured, or why it failed ({@code error} set, the
 * figures zero). {@code wallSeconds} is the row's whole time, set-up and load included. Latencies in microseconds; {@code cdf} holds (percentile, microseconds) points of the latency
 * distribution, empty when the workload reported none.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ReportOutcome(String section, String name, String workload, int threads, int records,
                            double seconds, long operations, double opsPerSecond, double p50Us, double p90Us,
                            double p99Us, double p999Us, long latencySamples, List<double[]> cdf,
                            Map<String, Double> metrics, double wallSeconds, String error) {
    /** Percentiles the CDF is sampled at. */
    static final double[] CDF_PERCENTILES = {0, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5, 99, 99.5, 99.9,
            99.99, 100};

    static ReportOutcome of(ReportEntry e, ReportResult r, double wallSeconds) {
        Histogram h = r.latencyNanos();
        List<double[]> cdf = new ArrayList<>();
        if (h.getTotalCount() > 0) {
            for (double p : CDF_PERCENTILES) {
                cdf.add(new double[] {p, h.getValueAtPercentile(p) / 1000.0});
            }
        }
        return new ReportOutcome(e.section(), e.name(), e.workload().name(), e.threads(), e.records(),
                r.elapsedNanos() / 1e9, r.operations(), r.opsPerSecond(), us(h, 50), us(h, 90), us(h, 99),
                us(h, 99.9), h.getTotalCount(), cdf, r.metrics(), wallSeconds, null);
    }

    static ReportOutcome failed(ReportEntry e, Throwable t, double wallSeconds) {
        return new ReportOutcome(e.section(), e.name(), e.workload().name(), e.threads(), e.records(), 0, 0, 0, 0,
                0, 0, 0, 0, List.of(), Map.of(), wallSeconds, t.getClass().getSimpleName() + ": " + t.getMessage());
    }

    private static double us(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(percentile) / 1000.0;
    }

    /** Whether the row ran to the end. */
    public boolean ok() {
        return error == null;
    }
}
