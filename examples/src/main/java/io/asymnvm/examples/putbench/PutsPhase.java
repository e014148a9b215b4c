package io.asymnvm.examples.putbench;

import io.asymnvm.examples.support.ThreadCpu;
import org.HdrHistogram.Histogram;

/**
 * The outcome of one timed phase: puts completed, their logical bytes (key and value bytes put), the phase's wall
 * time, every put's latency, and the CPU time the phase used by role ({@link ThreadCpu}).
 */
record PutsPhase(long puts, long bytes, long nanos, Histogram latency, ThreadCpu.Usage cpu) {
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
