package io.asymnvm.examples.appbench;

import org.HdrHistogram.Histogram;

import java.util.List;

/**
 * What a timed run of a mix did: transactions by type and outcome, their latencies (nanoseconds, every outcome),
 * and the elapsed time from the start signal to the last thread's last transaction.
 */
public record MixPhase(List<String> types, long[][] counts, Histogram latency, long elapsedNanos) {

    /** Transactions of type {@code t} that ended with {@code outcome}. */
    public long count(int t, Outcome outcome) {
        return counts[t][outcome.ordinal()];
    }

    /** Transactions of type {@code t}, every outcome. */
    public long count(int t) {
        long n = 0;
        for (long c : counts[t]) {
            n += c;
        }
        return n;
    }

    public long transactions() {
        long n = 0;
        for (int t = 0; t < counts.length; t++) {
            n += count(t);
        }
        return n;
    }

    /** Transactions with {@code outcome}, every type. */
    public long total(Outcome outcome) {
        long n = 0;
        for (int t = 0; t < counts.length; t++) {
            n += count(t, outcome);
        }
        return n;
    }

    public double opsPerSecond() {
        return elapsedNanos == 0 ? 0.0 : transactions() * 1e9 / elapsedNanos;
    }

    public double p50Micros() {
        return latency.getTotalCount() == 0 ? 0.0 : latency.getValueAtPercentile(50) / 1e3;
    }

    public double p99Micros() {
        return latency.getTotalCount() == 0 ? 0.0 : latency.getValueAtPercentile(99) / 1e3;
    }
}
