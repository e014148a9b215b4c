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
    /** CPU of the last {@link #run}, by role ({@link ThreadCpu}). */
    private volatile ThreadCpu.Usage cpu = ThreadCpu.Usage.NONE;

    /**
     * The CPU time of the last {@link #run} by role: the bodies' threads (each from its start, which is just
     * before the common start signal), the engine's and backend's threads in the meantime, and the process's.
     */
    public ThreadCpu.Usage cpu() {
        return cpu;
    }

    private static long sum(long[] values) {
        long total = 0;
        for (long v : values) {
            total = v < 0 || total < 0 ? -1 : total + v;
        }
        return total;
    }

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
        long[] workerCpu = new long[bodies.length];
        long[] workerAlloc = new long[bodies.length];
        for (int t = 0; t < bodies.length; t++) {
            Body body = bodies[t];
            int index = t;
            running[t] = new Thread(() -> {
                long allocatedBefore = ThreadCpu.currentThreadAllocatedBytes();
                try {
                    go.await();
                    body.run(start[0]);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    workerCpu[index] = ThreadCpu.currentThreadNanos(); // published by the join
                    long allocated = ThreadCpu.currentThreadAllocatedBytes();
                    workerAlloc[index] = allocated < 0 || allocatedBefore < 0 ? -1 : allocated - allocatedBefore;
                }
            }, namePrefix + t);
            running[t].start();
        }
        ThreadCpu before = ThreadCpu.snapshot();
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
        cpu = before.since(sum(workerCpu), sum(workerAlloc));
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
