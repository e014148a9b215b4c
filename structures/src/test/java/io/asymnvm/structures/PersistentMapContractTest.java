package io.asymnvm.structures;

import io.asymnvm.frontend.ExecutionMode;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The map contract, written once and run against every {@link PersistentMap} (subclasses pick the structure):
 * random operations checked against a {@code TreeMap} oracle over the local fabric and over TCP, a full
 * structural {@code verify()}, then a clean close and reopen of the same PM image compared again. Seeds are
 * fixed per case (override with {@code -Dasymnvm.seed=N}) and printed in every assertion message.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class PersistentMapContractTest {
    private static final int KEY_SPACE = 1500;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    abstract StructureType type();

    static Stream<Arguments> transportsAndKeys() {
        List<Arguments> out = new ArrayList<>();
        for (Nvm.Transport t : Nvm.Transport.values()) {
            for (KeyKind k : KeyKind.values()) {
                out.add(Arguments.of(t, k));
            }
        }
        return out.stream();
    }

    private long seed(Object... parts) {
        Long fixed = Long.getLong("asymnvm.seed");
        return fixed != null ? fixed : (Arrays.asList(parts).toString() + type()).hashCode() * 0x9E3779B97F4A7C15L;
    }

    private static MapOps ops(Nvm nvm) {
        return nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("transportsAndKeys")
    void shouldMatchOracleUnderRandomOperationsAndAfterReopen(Nvm.Transport transport, KeyKind kind) {
        long seed = seed(transport, kind);
        int ops = transport == Nvm.Transport.LOCAL ? 5000 : 2000;
        matchOracle(transport, kind, FrontendOptions.builder().embeddedSizeBytes(Nvm.PM_SIZE).conclude(), ops,
                seed, "seed=" + seed + " " + type() + " " + transport + " " + kind);
    }

    /**
     * The same contract in the naive baseline mode ({@code ExecutionMode.NAIVE}: no page cache, every transaction
     * written through to the heap before it returns), fewer operations since each costs several round trips.
     */
    @ParameterizedTest(name = "naive {0}")
    @EnumSource(Nvm.Transport.class)
    void shouldMatchOracleInNaiveMode(Nvm.Transport transport) {
        long seed = seed("naive", transport);
        int ops = transport == Nvm.Transport.LOCAL ? 1200 : 400;
        matchOracle(transport, KeyKind.LONG, FrontendOptions.builder().embeddedSizeBytes(Nvm.PM_SIZE)
                .mode(ExecutionMode.NAIVE).conclude(), ops, seed, "seed=" + seed + " " + type() + " naive "
                + transport);
    }

    private void matchOracle(Nvm.Transport transport, KeyKind kind, FrontendOptions options, int ops, long seed,
                             String ctx) {
        Random rnd = new Random(seed);
        TreeMap<Object, String> oracle = new TreeMap<>(kind.comparator());
        try (Nvm nvm = Nvm.start(dir, transport, options)) {
            MapOps m = ops(nvm);
            long root = m.create(type(), kind.codecId, "contract");
            for (int i = 0; i < ops; i++) {
                step(m, root, rnd, kind, oracle, ctx + " op=" + i);
            }
            m.verify(root);
            assertSameContent(m, root, oracle, ctx + " after random operations");
            long shape = m.shape(root);
            assertTrue(shape >= 2, ctx + ": structure never grew (height / buckets " + shape + ")");

            List<Object> keys = new ArrayList<>(oracle.keySet());
            Collections.shuffle(keys, rnd);
            for (Object k : keys.subList(0, keys.size() * 9 / 10)) {
                assertEquals(oracle.remove(k), m.remove(root, k), ctx + " drain remove " + k);
            }
            m.verify(root);
            assertSameContent(m, root, oracle, ctx + " after draining 90%");

            nvm.reopen();
            m = ops(nvm);
            m.verify(root);
            assertSameContent(m, root, oracle, ctx + " after reopen");
            for (int i = 0; i < ops / 4; i++) {
                step(m, root, rnd, kind, oracle, ctx + " after reopen op=" + i);
            }
            m.verify(root);
            assertSameContent(m, root, oracle, ctx + " after more operations");
        }
    }

    /** One random operation, applied to the structure and the oracle, results compared. */
    private void step(MapOps m, long root, Random rnd, KeyKind kind, NavigableMap<Object, String> oracle,
                      String ctx) {
        Object key = kind.randomKey(rnd, KEY_SPACE);
        int op = rnd.nextInt(100);
        if (op < 35) {
            String v = KeyKind.randomValue(rnd);
            assertEquals(oracle.put(key, v), m.put(root, key, v), ctx + " put " + key);
        } else if (op < 55) {
            assertEquals(oracle.remove(key), m.remove(root, key), ctx + " remove " + key);
        } else if (op < 68) {
            assertEquals(oracle.get(key), m.get(root, key), ctx + " get " + key);
        } else if (op < 76) {
            String v = KeyKind.randomValue(rnd);
            assertEquals(oracle.putIfAbsent(key, v), m.putIfAbsent(root, key, v), ctx + " putIfAbsent " + key);
        } else if (op < 86) {
            String suffix = "+" + rnd.nextInt(1000);
            String expected = MapOps.appendSuffix(oracle.get(key), suffix);
            if (expected == null) {
                oracle.remove(key);
            } else {
                oracle.put(key, expected);
            }
            assertEquals(expected, m.compute(root, key, suffix), ctx + " compute " + key);
        } else if (op < 90) {
            assertEquals(oracle.containsKey(key), m.containsKey(root, key), ctx + " containsKey " + key);
        } else if (op < 93) {
            assertEquals(oracle.size(), m.size(root), ctx + " size");
        } else if (type() == StructureType.BTREE) {
            checkOrderedQueries(m, root, rnd, kind, oracle, key, ctx);
        } else {
            assertEquals(oracle.get(key), m.get(root, key), ctx + " get " + key);
        }
    }

    private static void checkOrderedQueries(MapOps m, long root, Random rnd, KeyKind kind,
                                            NavigableMap<Object, String> oracle, Object key, String ctx) {
        Object[] nav = m.navigate(root, key);
        Object[] expected = {oracle.isEmpty() ? null : oracle.firstKey(), oracle.isEmpty() ? null : oracle.lastKey(),
            oracle.floorKey(key), oracle.ceilingKey(key), oracle.lowerKey(key), oracle.higherKey(key)};
        assertArrayEquals(expected, nav, ctx + " first/last/floor/ceiling/lower/higher of " + key);

        Object a = rnd.nextInt(8) == 0 ? null : kind.randomKey(rnd, KEY_SPACE);
        Object b = rnd.nextInt(8) == 0 ? null : kind.randomKey(rnd, KEY_SPACE);
        if (a != null && b != null && kind.comparator().compare(a, b) > 0) {
            Object t = a;
            a = b;
            b = t;
        }
        boolean fromInclusive = rnd.nextBoolean();
        boolean toInclusive = rnd.nextBoolean();
        boolean descending = rnd.nextBoolean();
        int limit = 1 + rnd.nextInt(60);
        NavigableMap<Object, String> sub = oracle;
        if (a != null) {
            sub = sub.tailMap(a, fromInclusive);
        }
        if (b != null) {
            sub = sub.headMap(b, toInclusive);
        }
        if (descending) {
            sub = sub.descendingMap();
        }
        List<Object[]> want = new ArrayList<>();
        for (Map.Entry<Object, String> e : sub.entrySet()) {
            if (want.size() == limit) {
                break;
            }
            want.add(new Object[] {e.getKey(), e.getValue()});
        }
        List<Object[]> got = m.range(root, a, fromInclusive, b, toInclusive, descending, limit);
        String what = ctx + " range " + (fromInclusive ? "[" : "(") + a + ", " + b + (toInclusive ? "]" : ")")
                + (descending ? " desc" : " asc") + " limit " + limit;
        assertEquals(want.size(), got.size(), what);
        for (int i = 0; i < want.size(); i++) {
            assertArrayEquals(want.get(i), got.get(i), what + " at " + i);
        }
    }

    /** Same size, same entries; for ordered structures also the same iteration order. */
    void assertSameContent(MapOps m, long root, NavigableMap<Object, String> oracle, String ctx) {
        assertEquals(oracle.size(), m.size(root), ctx + " size");
        List<Object[]> entries = m.entries(root);
        assertEquals(oracle.size(), entries.size(), ctx + " iterated entries");
        Map<Object, String> seen = new HashMap<>();
        for (Object[] e : entries) {
            assertNull(seen.put(e[0], (String) e[1]), ctx + " key iterated twice: " + e[0]);
            assertEquals(oracle.get(e[0]), e[1], ctx + " value of " + e[0]);
        }
        if (type() == StructureType.BTREE) {
            List<Object> order = new ArrayList<>();
            entries.forEach(e -> order.add(e[0]));
            assertEquals(new ArrayList<>(oracle.keySet()), order, ctx + " iteration order");
        }
        Object[] keys = oracle.keySet().toArray();
        String[] values = m.getAll(root, keys);
        for (int i = 0; i < keys.length; i++) {
            assertEquals(oracle.get(keys[i]), values[i], ctx + " get " + keys[i]);
        }
    }

    @ParameterizedTest
    @EnumSource(Nvm.Transport.class)
    void shouldRejectBadInputBeforeAnyWrite(Nvm.Transport transport) {
        try (Nvm nvm = Nvm.start(dir, transport)) {
            MapOps m = ops(nvm);
            BadInputOps bad = nvm.nvm().transactional(BadInputOps.class, new BadInputOps.Impl());
            long root = m.create(type(), Codecs.STRING_ID, "bad-input");
            m.put(root, "a", "1");
            String maxKey = "k".repeat(1024);
            m.put(root, maxKey, "at the limit");

            assertThrows(NullPointerException.class, () -> m.put(root, null, "v"));
            assertThrows(NullPointerException.class, () -> m.put(root, "b", null));
            assertThrows(NullPointerException.class, () -> m.get(root, null));
            IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                    () -> m.put(root, "k".repeat(1025), "v"));
            assertTrue(tooLong.getMessage().contains("1025") && tooLong.getMessage().contains("1024"),
                    tooLong.getMessage());
            assertThrows(IllegalArgumentException.class, () -> m.put(root, "é".repeat(513), "v"));
            assertThrows(IllegalArgumentException.class, () -> m.put(root, "c", "v".repeat((64 << 10) + 1)));
            assertThrows(IllegalArgumentException.class, () -> m.putIfAbsent(root, "k".repeat(2000), "v"));
            assertThrows(IllegalArgumentException.class, () -> m.compute(root, "k".repeat(2000), "v"));
            assertEquals(2, m.size(root));

            assertEquals("ok", bad.catchBadInputThenPut(root, "k".repeat(1500), "good"));
            assertEquals(3, m.size(root));
            assertEquals("ok", m.get(root, "good"));
            assertFalse(m.containsKey(root, "k".repeat(1000)));

            IllegalStateException failed = assertThrows(IllegalStateException.class,
                    () -> bad.putThenFail(root, "never"));
            assertTrue(failed.getMessage().contains("injected"), failed.getMessage());
            assertNull(m.get(root, "never"));
            m.verify(root);

            nvm.reopen();
            MapOps again = ops(nvm);
            assertEquals(3, again.size(root));
            assertEquals("at the limit", again.get(root, maxKey));
            assertNull(again.get(root, "never"));
            again.verify(root);
        }
    }

    /** Threads committing concurrently (serialized by the frontend) on disjoint keys of one structure. */
    @Test
    void shouldStayConsistentUnderConcurrentTransactions() throws Exception {
        long seed = seed("concurrent");
        int threads = 4;
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = ops(nvm);
            long root = m.create(type(), Codecs.LONG_ID, "concurrent");
            List<TreeMap<Object, String>> oracles = new ArrayList<>();
            List<Thread> workers = new ArrayList<>();
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            for (int t = 0; t < threads; t++) {
                TreeMap<Object, String> oracle = new TreeMap<>(KeyKind.LONG.comparator());
                oracles.add(oracle);
                Random rnd = new Random(seed + t);
                long base = t * 1_000_000L;
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < 400; i++) {
                            long key = base + rnd.nextInt(300);
                            if (rnd.nextInt(4) == 0) {
                                assertEquals(oracle.remove(key), m.remove(root, key), "seed=" + seed);
                            } else {
                                String v = KeyKind.randomValue(rnd);
                                assertEquals(oracle.put(key, v), m.put(root, key, v), "seed=" + seed);
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "map-writer-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            assertEquals(List.of(), failures, "seed=" + seed);
            TreeMap<Object, String> all = new TreeMap<>(KeyKind.LONG.comparator());
            oracles.forEach(all::putAll);
            m.verify(root);
            assertSameContent(m, root, all, "seed=" + seed + " concurrent");
        }
    }

    /**
     * Replaced and removed values give their blocks back: churning 1,200 values of 60 KB (about 77 MB of blocks
     * in total) through a heap of about 30 MB would run out of space if any leaked.
     */
    @Test
    void shouldReuseTheSpaceOfReplacedAndRemovedValues() {
        FrontendOptions options = FrontendOptions.builder().embeddedSizeBytes(192L << 20).conclude();
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL, options)) {
            MapOps m = ops(nvm);
            long root = m.create(type(), Codecs.LONG_ID, "churn");
            for (int i = 0; i < 1200; i++) {
                String v = String.valueOf((char) ('a' + i % 26)).repeat(60_000);
                m.put(root, (long) (i % 4), v);
                if (i % 3 == 0) {
                    m.remove(root, (long) ((i + 1) % 4));
                }
            }
            m.verify(root);
            assertEquals(String.valueOf((char) ('a' + 1199 % 26)).repeat(60_000), m.get(root, 3L));
        }
    }

    @Test
    void shouldRefuseOpeningWithAnotherTypeOrCodec() {
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = ops(nvm);
            BadInputOps bad = nvm.nvm().transactional(BadInputOps.class, new BadInputOps.Impl());
            long root = m.create(type(), Codecs.STRING_ID, "typed");
            bad.open(root, type(), Codecs.STRING_ID, Codecs.STRING_ID);
            StructureType other = type() == StructureType.BTREE ? StructureType.HASH_MAP : StructureType.BTREE;

            IllegalArgumentException wrongType = assertThrows(IllegalArgumentException.class,
                    () -> bad.open(root, other, Codecs.STRING_ID, Codecs.STRING_ID));
            String msg = wrongType.getMessage();
            assertTrue(msg.contains(type().displayName()) && msg.contains(other.displayName())
                    && msg.contains("typed"), msg);

            IllegalArgumentException wrongKey = assertThrows(IllegalArgumentException.class,
                    () -> bad.open(root, type(), Codecs.LONG_ID, Codecs.STRING_ID));
            assertTrue(wrongKey.getMessage().contains("string(2)") && wrongKey.getMessage().contains("long(1)"),
                    wrongKey.getMessage());
            IllegalArgumentException wrongValue = assertThrows(IllegalArgumentException.class,
                    () -> bad.open(root, type(), Codecs.STRING_ID, Codecs.BYTES_ID));
            assertTrue(wrongValue.getMessage().contains("bytes(3)"), wrongValue.getMessage());

            long notAStructure = bad.allocateJunk();
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> bad.open(notAStructure, type(), Codecs.STRING_ID, Codecs.STRING_ID));
            assertTrue(none.getMessage().contains("no persistent structure"), none.getMessage());
            assertThrows(IllegalArgumentException.class, () -> m.create(type(), Codecs.STRING_ID, "n".repeat(97)));
            assertEquals(0, m.size(root));
        }
    }
}
