package io.asymnvm.bench;

import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.mapbench.ZipfianGenerator;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.EngineStats;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Cache-hit gets (issue 8, goal 1) next to their volatile baselines, in one run: a persistent structure's
 * {@code get} through the transactional proxy of a {@link KeyValueStore} (a read-only call, run lockless) on the
 * embedded ({@code local}) fabric, and the same keys in a {@link TreeMap} behind a {@link ReentrantLock} (for the
 * B+tree) or a {@link ConcurrentHashMap} (for the hash map). Both hold {@value #KEYS} keys {@code "user" + i}
 * with values of {@value #VALUE_BYTES} characters, loaded before measuring, as {@code ./asymnvm bench map} loads
 * them; the page cache holds the whole structure, so every get is a cache hit (the tear-down prints the fetch
 * round trips of the trial, which must stay 0 after warm-up). Keys are drawn from a seeded, scrambled zipfian
 * sequence (theta {@value ZipfianGenerator#DEFAULT_THETA}, as {@code bench map}) precomputed per thread, so the
 * choice costs an array read in both benchmarks.
 *
 * <p>Run from the repository root (the allocation per operation is {@code gc.alloc.rate.norm}):
 * <pre>
 * mvn -B -ntp -q -pl bench -am package -DskipTests
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main MapGetBenchmark -prof gc
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main MapGetBenchmark -prof gc -t 2
 * </pre>
 * {@code persistentGetTwoThreads} runs the persistent get on two threads in the same run (without {@code -t}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {ForkFlags.OPEN_LANG, ForkFlags.OPEN_REFLECT, ForkFlags.EXPORT_NIO,
        ForkFlags.EXPORT_REF, ForkFlags.EXPORT_JAVAC, ForkFlags.NO_ANALYTICS, ForkFlags.LOG_WARN, ForkFlags.HEAP})
@Threads(1)
public class MapGetBenchmark {
    static final int KEYS = 100_000;
    static final int VALUE_BYTES = 100;
    /** Keys drawn per thread before the sequence repeats (a power of two). */
    static final int SEQUENCE = 1 << 16;

    @Param({"btree", "hash"})
    public String structure;

    String[] keys;
    private LoadedStore loaded;
    private KeyValueStore store;
    private Map<String, String> baseline;
    private ReentrantLock baselineLock;
    private EngineStats measuredFrom;

    @Setup(Level.Trial)
    public void setUp() {
        StructureKind kind = StructureKind.parse(structure);
        String[] values = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            values[i] = LoadedStore.padded("value-" + i + "-", VALUE_BYTES);
        }
        loaded = LoadedStore.load(kind, "jmh-get", values, VALUE_BYTES);
        keys = loaded.keys;
        store = loaded.store;
        AsymNvm nvm = loaded.nvm();
        if (kind == StructureKind.BTREE) {
            baseline = new TreeMap<>();
            baselineLock = new ReentrantLock();
        } else {
            baseline = new ConcurrentHashMap<>();
        }
        for (int i = 0; i < KEYS; i++) {
            baseline.put(keys[i], values[i]);
        }
        // every key once: each page of the structure is in the cache before the first measured get
        for (String key : keys) {
            if (store.get(key) == null) {
                throw new IllegalStateException("loaded key " + key + " not found");
            }
        }
        measuredFrom = nvm.stats();
    }


    @TearDown(Level.Trial)
    public void tearDown() {
        EngineStats end = loaded.nvm().stats();
        System.out.printf("%n[%s] after warm-up load: fetch round trips %d, lockless attempts %d, conflicts %d,"
                        + " fallbacks %d%n", structure, end.fetchRoundTrips() - measuredFrom.fetchRoundTrips(),
                end.locklessAttempts() - measuredFrom.locklessAttempts(),
                end.locklessConflicts() - measuredFrom.locklessConflicts(),
                end.locklessFallbacks() - measuredFrom.locklessFallbacks());
        loaded.close();
    }

    /** Per thread: its own seeded zipfian key sequence and cursor. */
    @State(Scope.Thread)
    public static class Cursor {
        private String[] sequence;
        private int next;

        @Setup(Level.Trial)
        public void setUp(MapGetBenchmark bench, ThreadParams thread) {
            ZipfianGenerator zipf = new ZipfianGenerator(KEYS, ZipfianGenerator.DEFAULT_THETA);
            SplittableRandom random = new SplittableRandom(42L * 0x9E3779B97F4A7C15L + thread.getThreadIndex());
            sequence = new String[SEQUENCE];
            for (int i = 0; i < SEQUENCE; i++) {
                sequence[i] = bench.keys[(int) zipf.nextScrambled(random)];
            }
        }

        String nextKey() {
            String key = sequence[next];
            next = (next + 1) & (SEQUENCE - 1);
            return key;
        }
    }

    /** A get of the persistent structure: one read-only persistent transaction, a cache hit. */
    @Benchmark
    public String persistentGet(Cursor cursor) {
        String value = store.get(cursor.nextKey());
        if (value == null) {
            throw new IllegalStateException("a loaded key is missing");
        }
        return value;
    }

    /**
     * The same get from two threads at once (issue 8 goal 2: read-only work on two cores, ≥ 1.7x one thread); its
     * score is the two threads' sum, so {@code persistentGetTwoThreads / persistentGet} of one run is the scaling.
     */
    @Benchmark
    @Threads(2)
    public String persistentGetTwoThreads(Cursor cursor) {
        return persistentGet(cursor);
    }

    /** The volatile baseline: TreeMap behind a ReentrantLock (B+tree), or ConcurrentHashMap (hash map). */
    @Benchmark
    public String baselineGet(Cursor cursor) {
        String key = cursor.nextKey();
        ReentrantLock lock = baselineLock;
        if (lock == null) {
            return baseline.get(key);
        }
        lock.lock();
        try {
            return baseline.get(key);
        } finally {
            lock.unlock();
        }
    }
}
