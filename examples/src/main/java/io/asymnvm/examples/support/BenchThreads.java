package io.asymnvm.examples.support;

import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One measured phase's threads, the part every timed driver shares ({@code bench tatp}/{@code smallbank}'s
 * {@code MixDriver}, {@code bench puts}' {@code TimedPuts}, {@code bench map}'s {@code MapBenchDriver}): one thread
 * per body, started together by one signal and handed the time it was given, joined in order; the first throwable
 * of any body is rethrown once every thread ended. Each body keeps its own counts and latencies and the caller
 * adds them up after {@link #run}.
 */
public final class BenchThreads {
    /** Spreads a run's seed over its threads (each thread's random is {@code seed * this + index}). */
    private static final long SEED_STRIDE = 0x9E3779B97F4A7C15L;

    /** One thread's work; runs after the common start signal, given the start time ({@link System#nanoTime()}). */
    @FunctionalInterface
    public interface Body {
        void run(long startNanos) throws Exception;
    }

    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    /** The random of thread {@code thread} of a run seeded with {@code seed}. */
    public static SplittableRandom random(long seed, int thread) {
        return new SplittableRandom(seed * SEED_STRIDE + thread);
    }

    /** Whether a body has thrown (a body may stop early when one has). */
    public boolean failed() {
        return failure.get() != null;
    }

    /**
     * Starts a thread per body (named {@code namePrefix} and its index), reads the clock, releases them together
     * and waits for all of them. Returns the start time; rethrows the first failure (a checked one wrapped in an
     * {@link IllegalStateException}).
     */
    public long run(String namePrefix, Body... bodies) {
        Thread[] running = new Thread[bodies.length];
        CountDownLatch go = new CountDownLatch(1);
        long[] start = new long[1];
        for (int t = 0; t < bodies.length; t++) {
            Body body = bodies[t];
            running[t] = new Thread(() -> {
                try {
                    go.await();
                    body.run(start[0]);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, namePrefix + t);
            running[t].start();
        }
        start[0] = System.nanoTime(); // published by countDown
        go.countDown();
        for (Thread thread : running) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the benchmark threads", e);
            }
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
        return start[0];
    }
}
