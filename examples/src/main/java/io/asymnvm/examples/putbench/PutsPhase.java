package io.asymnvm.examples.putbench;

import org.HdrHistogram.Histogram;

/**
 * The outcome of one timed phase: puts completed, their logical bytes (key and value bytes put), the phase's wall
 * time, and every put's latency.
 */
record PutsPhase(long puts, long bytes, long nanos, Histogram latency) {
    double opsPerSecond() {
        return nanos == 0 ? 0 : puts * 1e9 / nanos;
    }

    double p50Micros() {
        return latency.getValueAtPercentile(50) / 1000.0;
    }

    double p99Micros() {
        return latency.getValueAtPercentile(99) / 1000.0;
    }
}
