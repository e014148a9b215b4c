package io.asymnvm.examples.appbench;

import io.asymnvm.examples.support.BenchThreads;
import org.HdrHistogram.Histogram;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link TransactionMix} on {@code threads} threads for a fixed time: each thread, with its own seeded
 * random, draws a type by the mix's percentages, runs it and times it. A thread starts no transaction after the
 * deadline, so the run ends within one transaction of it. An exception other than the mix's outcomes stops the run
 * and is rethrown.
 */
public final class MixDriver {
    private final TransactionMix mix;
    private final int[] cumulative;
    private final int threads;

    public MixDriver(TransactionMix mix, int threads) {
        this.mix = Objects.requireNonNull(mix, "mix");
        this.cumulative = TransactionMix.cumulative(mix);
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        this.threads = threads;
    }

    /** Runs for {@code seconds} (0: an empty phase at once). */
    public MixPhase run(double seconds, long seed) {
        if (!(seconds >= 0)) {
            throw new IllegalArgumentException("seconds must not be negative: " + seconds);
        }
        long duration = (long) (seconds * TimeUnit.SECONDS.toNanos(1));
        BenchThreads phase = new BenchThreads();
        Worker[] workers = new Worker[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Worker(BenchThreads.random(seed, t), duration, phase);
        }
        long start = phase.run("bench-mix-", workers);
        Histogram latency = new Histogram(3);
        long[][] counts = new long[cumulative.length][Outcome.values().length];
        long end = start;
        for (Worker w : workers) {
            latency.add(w.latency);
            for (int i = 0; i < counts.length; i++) {
                for (int o = 0; o < counts[i].length; o++) {
                    counts[i][o] += w.counts[i][o];
                }
            }
            end = Math.max(end, w.end);
        }
        return new MixPhase(mix.types(), counts, latency, end - start);
    }

    /** One benchmark thread. */
    private final class Worker implements BenchThreads.Body {
        final Histogram latency = new Histogram(3);
        final long[][] counts = new long[cumulative.length][Outcome.values().length];
        private final SplittableRandom random;
        private final long duration;
        private final BenchThreads phase;
        long end;

        Worker(SplittableRandom random, long duration, BenchThreads phase) {
            this.random = random;
            this.duration = duration;
            this.phase = phase;
        }

        @Override
        public void run(long start) {
            long deadline = start + duration;
            long now = System.nanoTime();
            while (now < deadline && !phase.failed()) {
                int type = TransactionMix.pick(cumulative, random.nextInt(100));
                Outcome outcome = mix.run(type, random);
                long done = System.nanoTime();
                latency.recordValue(done - now);
                counts[type][outcome.ordinal()]++;
                now = done;
            }
            end = now;
        }
    }
}
