package io.asymnvm.examples.mapbench;

import io.asymnvm.examples.kv.LoadPattern;
import io.asymnvm.examples.support.BenchThreads;
import org.HdrHistogram.Histogram;

import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.LongConsumer;

/**
 * The YCSB-style driver, the same for a persistent structure and its volatile baseline: a load phase inserting
 * keys {@code 0..keys-1} in batches, then {@code threads} threads running {@code ops} operations between them,
 * each a read (with the workload's probability) or an update of a zipfian-chosen key, timed one by one.
 *
 * <p>Keys are {@code "user" + i}; load values are {@link LoadPattern#value} padded or cut to the value size;
 * updates write one of {@value #UPDATE_VALUES} fixed values. Every read must find a value (updates never
 * remove), so a read that finds none is counted as {@code missing}, a correctness failure. Each thread draws from
 * its own {@link SplittableRandom} seeded from the run's seed and its index, so a run's operation sequence is
 * reproducible (its interleaving is not).
 */
final class MapBenchDriver {
    static final int UPDATE_VALUES = 256;

    private final String[] keys;
    private final int valueBytes;
    private final String[] updateValues;

    MapBenchDriver(int keyCount, int valueBytes) {
        if (keyCount < 1) {
            throw new IllegalArgumentException("key count must be positive: " + keyCount);
        }
        this.valueBytes = valueBytes;
        this.keys = new String[keyCount];
        for (int i = 0; i < keyCount; i++) {
            keys[i] = "user" + i;
        }
        this.updateValues = new String[UPDATE_VALUES];
        for (int i = 0; i < UPDATE_VALUES; i++) {
            updateValues[i] = sized("update-" + i + "-");
        }
    }

    int keyCount() {
        return keys.length;
    }

    String key(int i) {
        return keys[i];
    }

    /** The value key {@code i} is loaded with. */
    String loadValue(int i) {
        return sized(LoadPattern.value(i) + "-");
    }

    private String sized(String prefix) {
        if (prefix.length() >= valueBytes) {
            return prefix.substring(0, valueBytes);
        }
        StringBuilder b = new StringBuilder(valueBytes).append(prefix);
        while (b.length() < valueBytes) {
            b.append((char) ('a' + b.length() % 26));
        }
        return b.toString();
    }

    /** Inserts every key, {@code batch} per call; reports progress in keys. Returns the nanoseconds it took. */
    long load(MapTarget target, int batch, LongConsumer progress) {
        long start = System.nanoTime();
        for (int from = 0; from < keys.length; from += batch) {
            int n = Math.min(batch, keys.length - from);
            String[] k = new String[n];
            String[] v = new String[n];
            for (int i = 0; i < n; i++) {
                k[i] = keys[from + i];
                v[i] = loadValue(from + i);
            }
            target.insertAll(k, v);
            progress.accept(n);
        }
        return System.nanoTime() - start;
    }

    /**
     * Runs {@code ops} operations over {@code threads} threads (the first {@code ops % threads} threads run one
     * more). Throughput is measured from the common start to the last thread's end.
     */
    MapBenchPhase run(MapTarget target, Workload workload, ZipfianGenerator keyChooser, long ops, int threads,
                      long seed, LongConsumer progress) {
        return run(target, workload, keyChooser, ops, threads, seed, progress, Long.MAX_VALUE);
    }

    /**
     * The same, but no thread starts an operation once {@code maxNanos} have passed since the common start (the
     * report's time-bounded rows give a large {@code ops}).
     */
    MapBenchPhase run(MapTarget target, Workload workload, ZipfianGenerator keyChooser, long ops, int threads,
                      long seed, LongConsumer progress, long maxNanos) {
        return run(target, workload, keyChooser, ops, threads, seed, progress, maxNanos, false);
    }

    /**
     * The same; with {@code disjoint}, thread {@code t} of {@code threads} maps each zipfian choice {@code k} to
     * the key {@code ≡ t (mod threads)} in its group of {@code threads} ({@code k - k % threads + t}, one group down
     * past the last key), so no two threads ever touch the same key and the popular keys stay popular.
     */
    MapBenchPhase run(MapTarget target, Workload workload, ZipfianGenerator keyChooser, long ops, int threads,
                      long seed, LongConsumer progress, long maxNanos, boolean disjoint) {
        Objects.requireNonNull(target, "target");
        if (disjoint && keys.length < threads) {
            throw new IllegalArgumentException("disjoint keys need at least one key per thread: " + keys.length
                    + " keys, " + threads + " threads");
        }
        if (keyChooser.items() != keys.length) {
            throw new IllegalArgumentException("zipfian over " + keyChooser.items() + " items, " + keys.length
                    + " keys");
        }
        Worker[] workers = new Worker[threads];
        for (int t = 0; t < threads; t++) {
            long share = ops / threads + (t < ops % threads ? 1 : 0);
            workers[t] = new Worker(target, workload.readProportion(), keyChooser, share,
                    BenchThreads.random(seed, t), progress, maxNanos, disjoint ? t : -1, threads);
        }
        BenchThreads phase = new BenchThreads();
        long start = phase.run("bench-map-", workers);
        Histogram latency = new Histogram(3);
        long reads = 0;
        long updates = 0;
        long missing = 0;
        long end = start;
        for (Worker w : workers) {
            latency.add(w.latency);
            reads += w.reads;
            updates += w.updates;
            missing += w.missing;
            end = Math.max(end, w.end);
        }
        return new MapBenchPhase(target.name(), reads, updates, missing, end - start, latency, phase.cpu());
    }

    /** One benchmark thread. */
    private final class Worker implements BenchThreads.Body {
        private static final int PROGRESS_EVERY = 1024;
        final Histogram latency = new Histogram(3);
        private final MapTarget target;
        private final double readProportion;
        private final ZipfianGenerator keyChooser;
        private final long ops;
        private final SplittableRandom random;
        private final LongConsumer progress;
        private final long maxNanos;
        /** With disjoint keys, this thread's residue modulo {@code stride}; -1 for every key. */
        private final int slot;
        private final int stride;
        long reads;
        long updates;
        long missing;
        long end;

        Worker(MapTarget target, double readProportion, ZipfianGenerator keyChooser, long ops,
               SplittableRandom random, LongConsumer progress, long maxNanos, int slot, int stride) {
            this.slot = slot;
            this.stride = stride;
            this.target = target;
            this.readProportion = readProportion;
            this.keyChooser = keyChooser;
            this.ops = ops;
            this.random = random;
            this.progress = progress;
            this.maxNanos = maxNanos;
        }

        @Override
        public void run(long start) {
            long stopAt = maxNanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + maxNanos;
            long i = 0;
            for (; i < ops; i++) {
                String key = keys[keyIndex((int) keyChooser.nextScrambled(random))];
                boolean read = random.nextDouble() < readProportion;
                String value = read ? null : updateValues[random.nextInt(UPDATE_VALUES)];
                long t0 = System.nanoTime();
                if (stopAt != Long.MAX_VALUE && t0 - stopAt > 0) {
                    break;
                }
                if (read) {
                    if (target.read(key) == null) {
                        missing++;
                    }
                } else {
                    target.update(key, value);
                }
                latency.recordValue(System.nanoTime() - t0);
                if (read) {
                    reads++;
                } else {
                    updates++;
                }
                if ((i + 1) % PROGRESS_EVERY == 0) {
                    progress.accept(PROGRESS_EVERY);
                }
            }
            progress.accept(i % PROGRESS_EVERY);
            end = System.nanoTime();
        }

        private int keyIndex(int chosen) {
            if (slot < 0) {
                return chosen;
            }
            int k = chosen - chosen % stride + slot;
            return k < keys.length ? k : k - stride;
        }
    }
}
