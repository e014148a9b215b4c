package io.asymnvm.examples.kv;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class KeyValueStoreTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static KeyValueStore store(AsymNvm nvm, StructureKind kind) {
        return nvm.transactional(KeyValueStore.class, new KeyValueStoreImpl(nvm, kind, "kv"));
    }

    @ParameterizedTest
    @EnumSource(StructureKind.class)
    void shouldMatchAnOracleAcrossAReopen(StructureKind kind) {
        long seed = 20_260_101L + kind.ordinal();
        Random random = new Random(seed);
        Map<String, String> oracle = new HashMap<>();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, kind);
            assertNull(kv.get("absent"), "a read-only first use creates the store");
            for (int t = 0; t < 1500; t++) {
                String key = "k" + random.nextInt(400);
                if (random.nextInt(5) == 0) {
                    assertEquals(oracle.remove(key), kv.delete(key), "seed=" + seed + " delete " + key);
                } else {
                    String value = "v" + t;
                    assertEquals(oracle.put(key, value), kv.put(key, value), "seed=" + seed + " put " + key);
                }
            }
            assertEquals(oracle.size(), kv.size(), "seed=" + seed);
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, kind);
            String[] keys = new String[400];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = "k" + i;
            }
            String[] values = kv.getAll(keys);
            for (int i = 0; i < keys.length; i++) {
                assertEquals(oracle.get(keys[i]), values[i], "seed=" + seed + " after reopen " + keys[i]);
            }
            assertEquals(oracle.size(), kv.size());
        }
    }

    @ParameterizedTest
    @EnumSource(StructureKind.class)
    void shouldApplyABatchAtomically(StructureKind kind) {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, kind);
            kv.putAll(new String[] {"a", "b", "a"}, new String[] {"1", "2", "3"});
            assertArrayEquals(new String[] {"3", "2", null}, kv.getAll(new String[] {"a", "b", "c"}));
            long commits = nvm.stats().commits();
            assertThrows(IllegalArgumentException.class, () -> kv.putAll(new String[] {"c", "d"}, new String[] {"x"}));
            assertThrows(NullPointerException.class,
                    () -> kv.putAll(new String[] {"c", null}, new String[] {"x", "y"}));
            assertThrows(IllegalArgumentException.class,
                    () -> kv.putAll(new String[] {"c", "d".repeat(2000)}, new String[] {"x", "y"}));
            assertThrows(NullPointerException.class, () -> kv.put("c", null));
            assertEquals(commits, nvm.stats().commits(), "refused calls commit nothing");
            assertNull(kv.get("c"), "the failed batches left nothing behind");
            assertEquals(2, kv.size());
        }
    }

    @Test
    void shouldScanAnOrderedRangeInPages() {
        TreeMap<String, String> oracle = new TreeMap<>();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, StructureKind.BTREE);
            String[] keys = new String[300];
            String[] values = new String[300];
            for (int i = 0; i < 300; i++) {
                keys[i] = String.format("key%04d", (i * 7) % 300);
                values[i] = "value" + i;
                oracle.put(keys[i], values[i]);
            }
            kv.putAll(keys, values);

            List<Map.Entry<String, String>> range = kv.scan("key0010", true, "key0020", 100);
            assertEquals(List.copyOf(oracle.subMap("key0010", true, "key0020", true).entrySet()), range);
            assertEquals(List.copyOf(oracle.subMap("key0010", false, "key0020", true).entrySet()),
                    kv.scan("key0010", false, "key0020", 100), "exclusive from");
            assertEquals(3, kv.scan("key0010", true, "key0020", 3).size(), "limit");
            assertEquals("key0000", kv.scan(null, true, null, 1).get(0).getKey(), "unbounded");
            assertTrue(kv.scan("key9", true, "key99", 10).isEmpty());

            String from = null;
            boolean inclusive = true;
            int seen = 0;
            while (true) {
                List<Map.Entry<String, String>> page = kv.scan(from, inclusive, null, 64);
                for (Map.Entry<String, String> e : page) {
                    assertEquals(oracle.get(e.getKey()), e.getValue());
                    seen++;
                }
                if (page.size() < 64) {
                    break;
                }
                from = page.get(page.size() - 1).getKey();
                inclusive = false;
            }
            assertEquals(300, seen, "paging visits every key once");
            assertThrows(IllegalArgumentException.class, () -> kv.scan("a", true, "b", 0));
            assertThrows(IllegalArgumentException.class,
                    () -> kv.scan("a", true, "b", KeyValueStore.MAX_SCAN_LIMIT + 1));
        }
    }

    @Test
    void shouldRefuseScansOnAHashMapAndTheOtherKindUnderATakenName() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, StructureKind.HASH);
            kv.put("a", "1");
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                    () -> kv.scan("a", true, "z", 10));
            assertTrue(e.getMessage().contains("hash map"), e.getMessage());
            nvm.sync(); // the catalog indexes the name once applied
            IllegalArgumentException taken = assertThrows(IllegalArgumentException.class,
                    () -> new KeyValueStoreImpl(nvm, StructureKind.BTREE, "kv"));
            assertTrue(taken.getMessage().contains("'kv'"), taken.getMessage());
        }
    }

    @Test
    void loadPatternShouldBeDeterministicAndDistinct() {
        assertEquals("key42", LoadPattern.key(42));
        assertEquals(LoadPattern.value(42), LoadPattern.value(42));
        assertTrue(LoadPattern.value(42).startsWith("value-42-"));
        assertEquals("value-42-".length() + 16, LoadPattern.value(42).length());
        assertTrue(!LoadPattern.value(1).substring(8).equals(LoadPattern.value(2).substring(8)));
    }
}
