package io.asymnvm.structures;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.layout.NodePageLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Model-based randomized test of both structures (issue 7, item 3): seeded sequences of puts, updates, deletes,
 * gets, range scans, two-structure transactions, aborted transactions and refused over-limit inputs, with values
 * of 0 B to 64 KiB (every boundary: inline limit, just under and over a page, the maximum and one past it) and keys
 * of 1 to 1,024 bytes (and one past), against a {@link TreeMap} oracle. Each run draws its configuration from its
 * seed: structure, local or tcp fabric, page cache from 64 KiB (evicts all the time) to 64 MiB, read-ahead 0, 1, 4
 * or 16 pages; and interleaves clean reopens, frontend crashes (the next incarnation recovers) and backend
 * restarts. Small slabs make every run cross many slab and page boundaries (at least 20 slab grants; one run with
 * default options too); halfway, every key is removed and the slabs that emptied are returned. After every
 * reopen or recovery and at the end, every key, a full ordered scan and each
 * structure's {@code verify()} are compared; every run ends with {@code inspect --deep} of the image.
 *
 * <p>A failure names the seed, the configuration and the operation, and a one-line command that replays it:
 * {@code -Dasymnvm.seed=S} fixes the seed of the first run (the others follow from it).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RandomizedMapTest {
    private static final int PAGE = 4096;
    private static final int[] VALUE_SIZES = {0, 1, 100, NodePageLayout.MAX_INLINE_VALUE,
            NodePageLayout.MAX_INLINE_VALUE + 1, 1024, PAGE - 1, PAGE, PAGE + 1, 3 * PAGE, 16 * PAGE,
            NodePageLayout.MAX_VALUE_LENGTH - 1, NodePageLayout.MAX_VALUE_LENGTH};
    private static final int[] KEY_SIZES = {1, 2, 16, 100, 500, NodePageLayout.MAX_KEY_LENGTH};
    private static final long[] CACHES = {64L << 10, 1L << 20, 64L << 20};
    private static final int[] READ_AHEAD = {0, 1, 4, 16};

    /** The operations, as persistent transactions over the structure under test and an auxiliary one. */
    public interface Ops {
        @PersistentTransaction
        boolean put(String key, byte[] value);

        @PersistentTransaction
        boolean remove(String key);

        @PersistentTransaction(readOnly = true)
        byte[] get(String key);

        @PersistentTransaction(readOnly = true)
        List<byte[]> getAll(List<String> keys);

        /** Ordered scan from {@code from}, at most {@code limit}; empty for the hash map. */
        @PersistentTransaction(readOnly = true)
        List<Map.Entry<String, byte[]>> range(String from, int limit);

        /** Both structures in one transaction: put into the main one, move {@code auxKey} out of the other. */
        @PersistentTransaction
        void putAndMove(String key, byte[] value, String auxKey);

        @PersistentTransaction
        void putThenFail(String key, byte[] value);

        @PersistentTransaction(readOnly = true)
        long[] sizes();

        @PersistentTransaction(readOnly = true)
        void verify();
    }

    static final class OpsImpl implements Ops {
        private final PersistentMap<String, byte[]> main;
        private final PersistentBTree<String, byte[]> tree;
        private final PersistentMap<String, byte[]> aux;

        OpsImpl(AsymNvm nvm, boolean btree) {
            if (btree) {
                tree = PersistentBTree.open(nvm, "main", Codecs.STRING, Codecs.BYTES);
                main = tree;
                aux = PersistentHashMap.open(nvm, "aux", Codecs.STRING, Codecs.BYTES);
            } else {
                tree = null;
                main = PersistentHashMap.open(nvm, "main", Codecs.STRING, Codecs.BYTES);
                aux = PersistentBTree.open(nvm, "aux", Codecs.STRING, Codecs.BYTES);
            }
        }

        @Override
        public boolean put(String key, byte[] value) {
            return main.put(key, value) == null;
        }

        @Override
        public boolean remove(String key) {
            return main.remove(key) != null;
        }

        @Override
        public byte[] get(String key) {
            return main.get(key);
        }

        @Override
        public List<byte[]> getAll(List<String> keys) {
            List<byte[]> out = new ArrayList<>();
            keys.forEach(k -> out.add(main.get(k)));
            return out;
        }

        @Override
        public List<Map.Entry<String, byte[]>> range(String from, int limit) {
            return tree == null ? List.of() : tree.range(from, true, null, false, false, limit);
        }

        @Override
        public void putAndMove(String key, byte[] value, String auxKey) {
            main.put(key, value);
            byte[] moved = aux.remove(auxKey);
            aux.put(key, moved == null ? value : moved);
        }

        @Override
        public void putThenFail(String key, byte[] value) {
            main.put(key, value);
            throw new IllegalStateException("abort after putting " + key);
        }

        @Override
        public long[] sizes() {
            return new long[] {main.size(), aux.size()};
        }

        @Override
        public void verify() {
            main.verify();
            aux.verify();
        }
    }

    /** One run's configuration, drawn from its seed. */
    record Config(long seed, boolean btree, boolean tcp, long cacheBytes, int readAhead, boolean defaults) {
        /**
         * The configuration of the run with {@code seed}. {@code fast}: a tiny cache only over the local fabric
         * (over tcp every operation then waits for several fetches; the slow profile runs that pairing too).
         */
        static Config draw(long seed, boolean defaults, boolean fast) {
            SplittableRandom r = new SplittableRandom(seed); // well mixed even for consecutive seeds
            boolean btree = r.nextBoolean();
            boolean tcp = r.nextBoolean();
            long cache = CACHES[r.nextInt(CACHES.length)];
            if (fast && tcp && cache == CACHES[0]) {
                cache = CACHES[1];
            }
            int readAhead = READ_AHEAD[r.nextInt(READ_AHEAD.length)];
            return defaults ? new Config(seed, btree, tcp, 64L << 20, 4, true)
                    : new Config(seed, btree, tcp, cache, readAhead, false);
        }

        FrontendOptions options() {
            return FrontendOptions.builder().cacheBytes(cacheBytes).readAheadPages(readAhead).conclude();
        }
    }

    /** State counts of one run, for the evidence. */
    record Counts(long ops, long slabGrants, long slabReturns, int reopens, int crashes, int restarts, long bytesWritten) {
    }

    @TempDir
    Path dir;

    @Test
    void shouldAgreeWithTheModelAcrossReopensCrashesAndRestarts() {
        long first = Long.getLong("asymnvm.seed", System.nanoTime());
        runs(first, 3, 1_200, 20, true);
    }

    @Test
    @Tag("slow")
    @Timeout(value = 3600, unit = TimeUnit.SECONDS)
    void shouldAgreeWithTheModelOverLongRuns() {
        long first = Long.getLong("asymnvm.seed", System.nanoTime());
        runs(first, 16, 12_000, 200, false);
    }

    private void runs(long first, int count, int ops, int minGrants, boolean fast) {
        List<String> summary = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Config c = Config.draw(first + i, i == 0, fast);
            long start = System.nanoTime();
            String replay = "-Dtest=RandomizedMapTest#" + (fast ? "shouldAgreeWithTheModelAcrossReopensCrashesAndRestarts"
                    : "shouldAgreeWithTheModelOverLongRuns -Pslow") + " -Dasymnvm.seed=" + first + " (run " + i
                    + " of the sequence)";
            Counts n = new Run(c, dir.resolve("run-" + i), replay).go(c.defaults() ? ops / 2 : ops,
                    c.defaults() ? 0 : minGrants);
            summary.add(c + " -> " + n + " in " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms");
            if (!c.defaults()) {
                assertTrue(n.slabGrants() >= minGrants, "only " + n.slabGrants() + " slab grants in " + c);
                assertTrue(n.slabReturns() > 0, "no slab emptied by removing every key was returned in " + c);
            }
        }
        System.out.println("randomized model runs (first seed " + first + "):");
        summary.forEach(s -> System.out.println("  " + s));
    }

    /** One seeded run against the oracle. */
    private static final class Run {
        private final Config config;
        private final Path dir;
        private final String replay;
        private final Random random;
        private final TreeMap<String, byte[]> oracle = new TreeMap<>();
        private final TreeMap<String, byte[]> auxOracle = new TreeMap<>();
        private final BackendConfiguration backend;
        private BackendNode node;
        private AsymNvm nvm;
        private Ops ops;
        private long done;
        private long grants;
        private long returns;
        private int reopens;
        private int crashes;
        private int restarts;
        private long bytes;
        private String lastOp = "start";

        Run(Config config, Path dir, String replay) {
            this.replay = replay;
            this.config = config;
            this.dir = dir;
            this.random = new Random(config.seed());
            // small slabs (unless default options): many grants, many slab boundaries per run
            this.backend = BackendConfiguration.builder(dir.resolve("backend.pm")).size(192L << 20)
                    .maxFrontends(2).port(config.tcp() ? 0 : -1)
                    .slabSize(config.defaults() ? BackendConfiguration.DEFAULT_SLAB_SIZE : 256 << 10).conclude();
        }

        /** At least {@code count} operations, more until {@code minGrants} slabs were granted (at most 4x). */
        Counts go(int count, int minGrants) {
            try {
                Files.createDirectories(dir);
                node = BackendNode.start(backend);
                open();
                for (int i = 0; i < count || grants + nvm.stats().slabGrants() < minGrants && i < 4 * count; i++) {
                    if (i == count / 2) {
                        drain();
                    } else {
                        step(i);
                    }
                }
                check("the end");
                closeAll();
                HeapInspector.Findings deep = InspectTool.deepInspect(backend.pmFile());
                if (!deep.ok()) {
                    throw new AssertionError("inspect --deep after the run: " + deep.problems());
                }
                return new Counts(done, grants, returns, reopens, crashes, restarts, bytes);
            } catch (Throwable t) {
                closeQuietly();
                fail("randomized run failed at operation " + done + " (" + lastOp + "), " + config
                        + "\n  replay: mvn -B -ntp -pl structures -am test -Dsurefire.failIfNoSpecifiedTests=false "
                        + replay, t);
                return null;
            }
        }

        private void open() {
            nvm = config.tcp() ? AsymNvm.connect("127.0.0.1", node.port(), 1,
                    config.options().withCredentials(node.credentialsFile()))
                    : AsymNvm.open(node.localFabric(), 1, config.options());
            ops = nvm.transactional(Ops.class, new OpsImpl(nvm, config.btree()));
        }

        private void step(int i) {
            int dice = random.nextInt(1000);
            if (dice < 2) {
                lastOp = "clean reopen";
                reopens++;
                grants += nvm.stats().slabGrants();
                returns += nvm.stats().slabReturns();
                nvm.close();
                open();
                check(lastOp);
            } else if (dice < 5) {
                lastOp = "frontend crash and recovery";
                crashes++;
                grants += nvm.stats().slabGrants();
                returns += nvm.stats().slabReturns();
                nvm.crash();
                open();
                nvm.recover();
                check(lastOp);
            } else if (dice < 7) {
                lastOp = "backend restart";
                restarts++;
                grants += nvm.stats().slabGrants();
                returns += nvm.stats().slabReturns();
                int port = node.port();
                nvm.close();
                node.close();
                node = BackendNode.start(config.tcp() ? BackendConfiguration.builder(backend.pmFile())
                        .size(backend.size()).maxFrontends(2).port(port).slabSize(backend.slabSize()).conclude()
                        : backend);
                open();
                check(lastOp);
            } else if (dice < 550) {
                String key = oracle.isEmpty() || random.nextInt(3) == 0 ? newKey() : existingKey();
                byte[] value = value();
                lastOp = "put of a " + value.length + "-byte value under a " + key.length() + "-byte key";
                boolean fresh = ops.put(key, value);
                expect(fresh == !oracle.containsKey(key), "put's 'absent before' answer for " + key);
                oracle.put(key, value);
                bytes += value.length;
            } else if (dice < 600) {
                if (oracle.isEmpty()) {
                    return;
                }
                String key = random.nextInt(10) == 0 ? newKey() : existingKey();
                lastOp = "remove";
                expect(ops.remove(key) == (oracle.remove(key) != null), "remove's answer for " + key);
            } else if (dice < 800) {
                String key = oracle.isEmpty() || random.nextInt(8) == 0 ? newKey() : existingKey();
                lastOp = "get";
                expect(Arrays.equals(ops.get(key), oracle.get(key)), "get of " + describe(key));
            } else if (dice < 880) {
                String from = random.nextBoolean() && !oracle.isEmpty() ? existingKey() : newKey();
                int limit = 1 + random.nextInt(40);
                lastOp = "range from " + describe(from) + " limit " + limit;
                List<Map.Entry<String, byte[]>> got = ops.range(from, limit);
                if (config.btree()) {
                    List<Map.Entry<String, byte[]>> want = new ArrayList<>(oracle.tailMap(from, true).entrySet())
                            .subList(0, Math.min(limit, oracle.tailMap(from, true).size()));
                    compare(want, got, lastOp);
                }
            } else if (dice < 940) {
                String key = newKey();
                byte[] value = value();
                String auxKey = auxOracle.isEmpty() || random.nextBoolean() ? newKey()
                        : auxOracle.keySet().stream().skip(random.nextInt(auxOracle.size())).findFirst().orElseThrow();
                lastOp = "two-structure transaction";
                ops.putAndMove(key, value, auxKey);
                oracle.put(key, value);
                byte[] moved = auxOracle.remove(auxKey);
                auxOracle.put(key, moved == null ? value : moved);
                bytes += value.length;
            } else if (dice < 975) {
                String key = random.nextBoolean() && !oracle.isEmpty() ? existingKey() : newKey();
                lastOp = "aborted put";
                try {
                    ops.putThenFail(key, value());
                    fail("the aborting method returned");
                } catch (IllegalStateException expected) {
                    expect(expected.getMessage().startsWith("abort after putting"), expected.toString());
                }
                expect(Arrays.equals(ops.get(key), oracle.get(key)), "an aborted put left a trace under "
                        + describe(key));
            } else {
                lastOp = "over-limit input";
                boolean bigKey = random.nextBoolean();
                String key = bigKey ? "k".repeat(NodePageLayout.MAX_KEY_LENGTH + 1) : newKey();
                byte[] value = new byte[bigKey ? 1 : NodePageLayout.MAX_VALUE_LENGTH + 1];
                try {
                    ops.put(key, value);
                    fail("an over-limit " + (bigKey ? "key" : "value") + " was accepted");
                } catch (IllegalArgumentException expected) {
                    expect(expected.getMessage().contains("exceeds the limit"), expected.toString());
                }
            }
            done++;
        }

        /**
         * Removes every key of the structure under test (their blobs are freed), then has the slabs that emptied
         * returned at once (they go back lazily otherwise); the node pools keep their extents.
         */
        private void drain() {
            lastOp = "removal of every key, then slab returns";
            for (String key : new ArrayList<>(oracle.keySet())) {
                expect(ops.remove(key), "remove of " + describe(key));
                oracle.remove(key);
            }
            nvm.sync();
            nvm.returnEmptySlabs();
            check(lastOp);
        }

        /** A key not in the oracle: a size from the boundary list, random printable content. */
        private String newKey() {
            int size = KEY_SIZES[random.nextInt(KEY_SIZES.length)];
            StringBuilder b = new StringBuilder(size);
            for (int i = 0; i < size; i++) {
                b.append((char) ('a' + random.nextInt(26)));
            }
            String k = b.toString();
            return oracle.containsKey(k) ? newKey() : k;
        }

        private String existingKey() {
            String probe = newKey();
            String k = oracle.ceilingKey(probe);
            return k != null ? k : oracle.firstKey();
        }

        private byte[] value() {
            byte[] v = new byte[VALUE_SIZES[random.nextInt(VALUE_SIZES.length)]];
            random.nextBytes(v);
            return v;
        }

        /** Every key, sizes, an ordered full scan (B+tree) and both verify()s. */
        private void check(String when) {
            lastOp = "full check after " + when;
            long[] sizes = ops.sizes();
            expect(sizes[0] == oracle.size() && sizes[1] == auxOracle.size(), "sizes " + Arrays.toString(sizes)
                    + ", oracle " + oracle.size() + " and " + auxOracle.size());
            List<String> keys = new ArrayList<>(oracle.keySet());
            for (int from = 0; from < keys.size(); from += 200) {
                List<String> batch = keys.subList(from, Math.min(keys.size(), from + 200));
                List<byte[]> got = ops.getAll(batch);
                for (int i = 0; i < batch.size(); i++) {
                    expect(Arrays.equals(got.get(i), oracle.get(batch.get(i))), "value of " + describe(batch.get(i)));
                }
            }
            if (config.btree() && !oracle.isEmpty()) {
                compare(new ArrayList<>(oracle.entrySet()), ops.range(oracle.firstKey(), oracle.size() + 1),
                        "full scan");
            }
            ops.verify();
        }

        private static void compare(List<Map.Entry<String, byte[]>> want, List<Map.Entry<String, byte[]>> got,
                                    String what) {
            expect(want.size() == got.size(), what + ": " + got.size() + " entries, oracle " + want.size());
            for (int i = 0; i < want.size(); i++) {
                expect(want.get(i).getKey().equals(got.get(i).getKey())
                        && Arrays.equals(want.get(i).getValue(), got.get(i).getValue()), what + ": entry " + i
                        + " is " + describe(got.get(i).getKey()) + ", oracle " + describe(want.get(i).getKey()));
            }
        }

        private static String describe(String key) {
            return key.length() <= 24 ? "'" + key + "'" : "'" + key.substring(0, 24) + "...' (" + key.length()
                    + " chars)";
        }

        private static void expect(boolean ok, String what) {
            if (!ok) {
                throw new AssertionError(what);
            }
        }

        private void closeAll() {
            grants += nvm.stats().slabGrants();
            returns += nvm.stats().slabReturns();
            nvm.close();
            nvm = null;
            node.close();
            node = null;
        }

        private void closeQuietly() {
            try {
                if (nvm != null) {
                    nvm.crash();
                }
            } catch (RuntimeException ignored) {
                // already failing
            }
            try {
                if (node != null) {
                    node.close();
                }
            } catch (RuntimeException ignored) {
                // already failing
            }
        }
    }
}
