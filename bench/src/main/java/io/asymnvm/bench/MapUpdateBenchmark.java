package io.asymnvm.bench;

import io.asymnvm.examples.kv.KeyValueStore;
import io.asymnvm.examples.kv.StructureKind;
import io.asymnvm.examples.mapbench.ZipfianGenerator;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.CommitSections;
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

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Durable updates of existing keys (issue 8, goal 2: what one update costs, and how writers on disjoint keys
 * scale), the JMH counterpart of {@code ./asymnvm bench map --workload u --disjoint}: a persistent structure's
 * {@code put} of an existing key through the transactional proxy of a {@link KeyValueStore} (a logged call run as
 * an optimistic writer, a SYNC commit) on the embedded ({@code local}) fabric. {@value #KEYS} keys
 * {@code "user" + i} with values of {@value #VALUE_BYTES} characters are loaded first; every update writes one of
 * {@value #UPDATE_VALUES} values of the same size (so a value is overwritten in place and nothing is allocated in
 * the heap). Thread {@code t} of {@code T} only updates keys {@code = t (mod T)}, chosen from a seeded, scrambled
 * zipfian sequence precomputed per thread. The tear-down prints the optimistic writers' attempts, conflicts and
 * fallbacks and the commit lock's mean hold and wait time ({@link CommitSections}).
 *
 * <p>The figure that does not depend on the machine's load is the allocation per update,
 * {@code gc.alloc.rate.norm} (what the GC pays for). Run from the repository root:
 * <pre>
 * mvn -B -ntp -q -pl bench -am package -DskipTests
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main MapUpdateBenchmark -prof gc
 * java -cp "bench/target/classes:bench/target/lib/*" org.openjdk.jmh.Main MapUpdateBenchmark -prof gc -t 2
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {ForkFlags.OPEN_LANG, ForkFlags.OPEN_REFLECT, ForkFlags.EXPORT_NIO,
        ForkFlags.EXPORT_REF, ForkFlags.EXPORT_JAVAC, ForkFlags.NO_ANALYTICS, ForkFlags.LOG_WARN, ForkFlags.HEAP})
@Threads(1)
public class MapUpdateBenchmark {
    static final int KEYS = 100_000;
    static final int VALUE_BYTES = 100;
    static final int UPDATE_VALUES = 256;
    /** Keys drawn per thread before the sequence repeats (a power of two). */
    static final int SEQUENCE = 1 << 16;

    @Param({"btree", "hash"})
    public String structure;

    String[] keys;
    String[] updateValues;
    private LoadedStore loaded;
    private KeyValueStore store;
    private EngineStats measuredFrom;
    private CommitSections.Snapshot sectionsFrom;

    @Setup(Level.Trial)
    public void setUp() {
        StructureKind kind = StructureKind.parse(structure);
        updateValues = new String[UPDATE_VALUES];
        for (int i = 0; i < UPDATE_VALUES; i++) {
            updateValues[i] = LoadedStore.padded("update-" + i + "-", VALUE_BYTES);
        }
        String[] values = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            values[i] = LoadedStore.padded("value-" + i + "-", VALUE_BYTES);
        }
        loaded = LoadedStore.load(kind, "jmh-update", values, VALUE_BYTES);
        keys = loaded.keys;
        store = loaded.store;
        AsymNvm nvm = loaded.nvm();
        measuredFrom = nvm.stats();
        sectionsFrom = nvm.commitSections();
    }


    @TearDown(Level.Trial)
    public void tearDown() {
        AsymNvm nvm = loaded.nvm();
        EngineStats end = nvm.stats();
        CommitSections.Snapshot sections = nvm.commitSections().minus(sectionsFrom);
        System.out.printf("%n[%s] warm-up and measurement: commits %d, optimistic attempts %d, conflicts %d, "
                        + "fallbacks %d; commit lock held %.3f us and waited for %.3f us per commit%n", structure,
                end.commits() - measuredFrom.commits(), end.optimisticAttempts() - measuredFrom.optimisticAttempts(),
                end.optimisticConflicts() - measuredFrom.optimisticConflicts(),
                end.optimisticFallbacks() - measuredFrom.optimisticFallbacks(), sections.holdMicrosPerSection(),
                sections.waitMicrosPerSection());
        loaded.close();
    }

    /** Per thread: its own seeded zipfian sequence of keys it alone updates, and cursors. */
    @State(Scope.Thread)
    public static class Cursor {
        private String[] sequence;
        private int next;
        private int nextValue;

        @Setup(Level.Trial)
        public void setUp(MapUpdateBenchmark bench, ThreadParams thread) {
            ZipfianGenerator zipf = new ZipfianGenerator(KEYS, ZipfianGenerator.DEFAULT_THETA);
            SplittableRandom random = new SplittableRandom(42L * 0x9E3779B97F4A7C15L + thread.getThreadIndex());
            int stride = thread.getThreadCount();
            int slot = thread.getThreadIndex();
            sequence = new String[SEQUENCE];
            for (int i = 0; i < SEQUENCE; i++) {
                int chosen = (int) zipf.nextScrambled(random);
                int k = chosen - chosen % stride + slot; // this thread's key in the chosen key's group
                sequence[i] = bench.keys[k < KEYS ? k : k - stride];
            }
        }

        String nextKey() {
            String key = sequence[next];
            next = (next + 1) & (SEQUENCE - 1);
            return key;
        }

        int nextValue() {
            nextValue = (nextValue + 1) & (UPDATE_VALUES - 1);
            return nextValue;
        }
    }

    /** An update of an existing key: one logged persistent transaction, committed durably (SYNC). */
    @Benchmark
    public String persistentUpdate(Cursor cursor) {
        String old = store.put(cursor.nextKey(), updateValues[cursor.nextValue()]);
        if (old == null) {
            throw new IllegalStateException("a loaded key is missing");
        }
        return old;
    }
}
