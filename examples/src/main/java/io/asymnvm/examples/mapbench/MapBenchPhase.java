package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.support.ThreadCpu;
import org.HdrHistogram.Histogram;

/**
 * What one measured phase of {@code bench map} did on one target: operations by kind, reads that found no value
 * (a correctness failure), the wall time from the common start to the last thread's end, and the latency of every
 * operation in nanoseconds, and the CPU time the phase used by role ({@link ThreadCpu}).
 */
public record MapBenchPhase(String target, long reads, long updates, long missing, long nanos,
                            Histogram latencyNanos, ThreadCpu.Usage cpu) {

    public long ops() {
        return reads + updates;
    }

    public double opsPerSecond() {
        return nanos == 0 ? 0 : ops() * 1e9 / nanos;
    }

    public double p50Micros() {
        return micros(50);
    }

    public double p99Micros() {
        return micros(99);
    }

    private double micros(double percentile) {
        return latencyNanos.getTotalCount() == 0 ? 0 : latencyNanos.getValueAtPercentile(percentile) / 1000.0;
    }
}
