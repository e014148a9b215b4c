package io.asymnvm.examples.appbench;

import org.HdrHistogram.Histogram;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

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
        Worker[] workers = new Worker[threads];
        Thread[] running = new Thread[threads];
        CountDownLatch go = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] start = new long[1];
        for (int t = 0; t < threads; t++) {
            Worker w = new Worker(new SplittableRandom(seed * 0x9E3779B97F4A7C15L + t), go, start, failure);
            workers[t] = w;
            running[t] = new Thread(() -> {
                try {
                    w.run(duration);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "bench-mix-" + t);
            running[t].start();
        }
        start[0] = System.nanoTime();
        go.countDown();
        Histogram latency = new Histogram(3);
        long[][] counts = new long[cumulative.length][Outcome.values().length];
        long end = start[0];
        for (int t = 0; t < threads; t++) {
            try {
                running[t].join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the benchmark threads", e);
            }
            latency.add(workers[t].latency);
            for (int i = 0; i < counts.length; i++) {
                for (int o = 0; o < counts[i].length; o++) {
                    counts[i][o] += workers[t].counts[i][o];
                }
            }
            end = Math.max(end, workers[t].end);
        }
        Throwable f = failure.get();
        if (f instanceof RuntimeException re) {
            throw re;
        }
        if (f instanceof Error err) {
            throw err;
        }
        if (f != null) {
            throw new IllegalStateException(f);
        }
        return new MixPhase(mix.types(), counts, latency, end - start[0]);
    }

    /** One benchmark thread. */
    private final class Worker {
        final Histogram latency = new Histogram(3);
        final long[][] counts = new long[cumulative.length][Outcome.values().length];
        private final SplittableRandom random;
        private final CountDownLatch go;
        private final long[] start;
        private final AtomicReference<Throwable> failure;
        long end;

        Worker(SplittableRandom random, CountDownLatch go, long[] start, AtomicReference<Throwable> failure) {
            this.random = random;
            this.go = go;
            this.start = start;
            this.failure = failure;
        }

        void run(long duration) throws InterruptedException {
            go.await();
            long deadline = start[0] + duration;
            long now = System.nanoTime();
            while (now < deadline && failure.get() == null) {
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
