package io.asymnvm.examples.putbench;

import io.asymnvm.examples.support.BenchThreads;
import org.HdrHistogram.Histogram;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The driver, the same for every target: {@code threads} threads put for a fixed duration, each choosing keys
 * uniformly among {@code keys} with its own seeded random, each put timed. A thread starts no put after the
 * deadline, so a phase ends by itself within one put of it. Each thread owns one value buffer of the run's size
 * whose first eight bytes change with every put (so no two consecutive puts write the same bytes).
 */
final class TimedPuts {
    private final String[] keys;
    private final int valueSize;
    private final int threads;

    TimedPuts(int keyCount, int valueSize, int threads) {
        if (keyCount < 1 || valueSize < 1 || threads < 1) {
            throw new IllegalArgumentException("keys, value size and threads must be positive: " + keyCount + ", "
                    + valueSize + ", " + threads);
        }
        this.keys = new String[keyCount];
        for (int i = 0; i < keyCount; i++) {
            keys[i] = PutsBenchConfig.key(i);
        }
        this.valueSize = valueSize;
        this.threads = threads;
    }

    /** Logical bytes of one put: the key's bytes (ASCII) and the value's, averaged over the key set. */
    double logicalBytesPerPut() {
        long keyBytes = 0;
        for (String k : keys) {
            keyBytes += k.length();
        }
        return (double) keyBytes / keys.length + valueSize;
    }

    /** Runs the phase for {@code seconds} (0: returns an empty phase at once). */
    PutsPhase run(PutTarget target, double seconds, long seed) {
        Objects.requireNonNull(target, "target");
        long duration = (long) (seconds * TimeUnit.SECONDS.toNanos(1));
        Worker[] workers = new Worker[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Worker(target, BenchThreads.random(seed, t), duration);
        }
        BenchThreads phase = new BenchThreads();
        long start = phase.run("bench-puts-", workers);
        Histogram latency = new Histogram(3);
        long puts = 0;
        long bytes = 0;
        long end = start;
        for (Worker w : workers) {
            latency.add(w.latency);
            puts += w.puts;
            bytes += w.bytes;
            end = Math.max(end, w.end);
        }
        return new PutsPhase(puts, bytes, end - start, latency, phase.cpu());
    }

    /** One benchmark thread. */
    private final class Worker implements BenchThreads.Body {
        final Histogram latency = new Histogram(3);
        private final PutTarget target;
        private final SplittableRandom random;
        private final long duration;
        private final byte[] value = new byte[valueSize];
        long puts;
        long bytes;
        long end;

        Worker(PutTarget target, SplittableRandom random, long duration) {
            this.target = target;
            this.random = random;
            this.duration = duration;
            random.nextBytes(value);
        }

        @Override
        public void run(long start) {
            long deadline = start + duration;
            long now = System.nanoTime();
            while (now < deadline) {
                String key = keys[random.nextInt(keys.length)];
                long stamp = puts;
                for (int i = 0; i < Math.min(8, value.length); i++) {
                    value[i] = (byte) (stamp >>> (8 * i));
                }
                target.put(key, value);
                long done = System.nanoTime();
                latency.recordValue(done - now);
                puts++;
                bytes += key.length() + value.length;
                now = done;
            }
            end = now;
        }
    }
}
