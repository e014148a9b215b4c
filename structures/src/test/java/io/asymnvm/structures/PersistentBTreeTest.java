package io.asymnvm.structures;

import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** B+tree behaviour beyond the map contract: deep trees, merges down to one leaf, bulk load, ordered scans. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PersistentBTreeTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static long seed(long fallback) {
        return Long.getLong("asymnvm.seed", fallback);
    }

    /** A key of 200..1024 bytes: inner nodes hold only a handful of separators, so the tree gets deep. */
    private static String hugeKey(int n) {
        String base = String.format("%06d/", n);
        return base + "x".repeat(200 + (n * 7919) % (1024 - 200 - base.length() + 1));
    }

    @Test
    void shouldStayBalancedThroughDeepSplitsMergesAndRedistributions() {
        long seed = seed(11);
        Random rnd = new Random(seed);
        String ctx = "seed=" + seed;
        TreeMap<Object, String> oracle = new TreeMap<>(KeyKind.STRING.comparator());
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.BTREE, Codecs.STRING_ID, "deep");
            int maxHeight = 0;
            for (int i = 0; i < 4000; i++) {
                String key = hugeKey(rnd.nextInt(1200));
                if (rnd.nextInt(10) < 6) {
                    String v = KeyKind.randomValue(rnd);
                    assertEquals(oracle.put(key, v), m.put(root, key, v), ctx + " op " + i);
                } else {
                    assertEquals(oracle.remove(key), m.remove(root, key), ctx + " op " + i);
                }
                if (i % 500 == 499) {
                    m.verify(root);
                    maxHeight = Math.max(maxHeight, (int) m.shape(root));
                }
            }
            assertTrue(maxHeight >= 4, ctx + " tree height only reached " + maxHeight);
            List<Object> keys = new ArrayList<>(oracle.keySet());
            Collections.shuffle(keys, rnd);
            for (int i = 0; i < keys.size(); i++) {
                assertEquals(oracle.remove(keys.get(i)), m.remove(root, keys.get(i)), ctx + " drain " + i);
                if (i % 97 == 0) {
                    m.verify(root);
                }
            }
            m.verify(root);
            assertEquals(0, m.size(root), ctx);
            assertEquals(1, m.shape(root), ctx + " an empty tree is a single leaf");
            assertArrayEquals(new Object[] {null, null, null, null, null, null}, m.navigate(root, "k"), ctx);
            m.put(root, "again", "v");
            m.verify(root);
            assertEquals("v", m.get(root, "again"), ctx);
        }
    }

    @Test
    void shouldBulkLoadSortedChunksAndScanBothWays() {
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.BTREE, Codecs.LONG_ID, "bulk");
            int total = 30_000;
            for (int from = 0; from < total; from += 2000) {
                Object[] keys = new Object[2000];
                String[] values = new String[2000];
                for (int i = 0; i < 2000; i++) {
                    keys[i] = (long) (from + i) * 2;
                    values[i] = KeyKind.loadValue(from + i);
                }
                m.appendSorted(root, keys, values);
            }
            m.verify(root);
            assertEquals(total, m.size(root));
            assertTrue(m.shape(root) >= 2);

            IllegalArgumentException notAbove = assertThrows(IllegalArgumentException.class,
                    () -> m.appendSorted(root, new Object[] {10L}, new String[] {"x"}));
            assertTrue(notAbove.getMessage().contains("not above"), notAbove.getMessage());
            assertThrows(IllegalArgumentException.class, () -> m.appendSorted(root,
                    new Object[] {100_000L, 100_002L, 100_001L}, new String[] {"a", "b", "c"}));
            assertNull(m.get(root, 100_000L), "a refused bulk load writes nothing");

            for (long k = 1; k < 2000; k += 2) {
                m.put(root, k, "odd");
            }
            m.verify(root);
            assertEquals("odd", m.get(root, 1999L));
            assertEquals(KeyKind.loadValue(1000), m.get(root, 2000L));

            List<Object[]> desc = m.range(root, 100L, false, 110L, true, true, 100);
            List<Object> keys = new ArrayList<>();
            desc.forEach(e -> keys.add(e[0]));
            assertEquals(List.of(110L, 109L, 108L, 107L, 106L, 105L, 104L, 103L, 102L, 101L), keys);
            List<Object[]> tail = m.range(root, (long) total * 2 - 6, true, null, true, false, 100);
            assertEquals(3, tail.size());
            assertEquals((long) total * 2 - 2, tail.get(2)[0]);
            List<Object[]> all = m.entries(root);
            assertEquals(total + 1000, all.size());
            for (int i = 1; i < all.size(); i++) {
                assertTrue((Long) all.get(i - 1)[0] < (Long) all.get(i)[0], "ascending at " + i);
            }
        }
    }

    @Test
    void shouldKeepNegativeLongKeysInNumericOrder() {
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.BTREE, Codecs.LONG_ID, "signed");
            long[] keys = {Long.MIN_VALUE, -5, -1, 0, 1, 7, Long.MAX_VALUE};
            for (int i = keys.length - 1; i >= 0; i--) {
                m.put(root, keys[i], "v" + i);
            }
            List<Object[]> all = m.entries(root);
            for (int i = 0; i < keys.length; i++) {
                assertEquals(keys[i], all.get(i)[0]);
            }
            assertArrayEquals(new Object[] {Long.MIN_VALUE, Long.MAX_VALUE, -1L, -1L, -5L, 0L},
                    m.navigate(root, -1L));
        }
    }

    @Test
    void shouldRejectEntriesOfABulkLoadThatDoNotFitOneTransaction() {
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.BTREE, Codecs.LONG_ID, "bulk-limit");
            Object[] keys = new Object[300];
            String[] values = new String[300];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = (long) i;
                values[i] = "v".repeat(1000);
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> m.appendSorted(root, keys, values));
            assertTrue(e.getMessage().contains(String.valueOf(PersistentBTree.MAX_BULK_BYTES)), e.getMessage());
            assertEquals(0, m.size(root));
            m.verify(root);
        }
    }
}
