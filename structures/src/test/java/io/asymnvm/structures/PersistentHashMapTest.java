package io.asymnvm.structures;

import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Hash map behaviour beyond the map contract: incremental growth, overflow chains, chunked scans. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PersistentHashMapTest {
    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /**
     * With a redo budget of 24 KiB per transaction, a map grows from one bucket to hundreds: growth is one bucket
     * per operation, never a full rehash (which would need the whole table's bytes of redo). The same budget holds
     * for B+tree splits, merges and root growth.
     */
    @Test
    void shouldGrowOneBucketAtATimeWithinASmallRedoBudget() {
        long seed = Long.getLong("asymnvm.seed", 23);
        Random rnd = new Random(seed);
        FrontendOptions small = FrontendOptions.builder().redoBatch(64, 24 << 10, 1000)
                .embeddedSizeBytes(Nvm.PM_SIZE).conclude();
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL, small)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long hash = m.create(StructureType.HASH_MAP, Codecs.LONG_ID, "grow");
            long tree = m.create(StructureType.BTREE, Codecs.STRING_ID, "grow-tree");
            Map<Object, String> oracle = new HashMap<>();
            long buckets = m.shape(hash);
            assertEquals(1, buckets);
            for (int i = 0; i < 12_000; i++) {
                long key = rnd.nextInt(1 << 30);
                String v = "v" + rnd.nextInt(1 << 20) + (rnd.nextInt(20) == 0 ? "w".repeat(200) : "");
                assertEquals(oracle.put(key, v), m.put(hash, key, v), "seed=" + seed + " op " + i);
                if (i % 3 == 0) {
                    m.put(tree, "t".repeat(rnd.nextInt(900)) + key, v);
                }
                long now = m.shape(hash);
                assertTrue(now == buckets || now == buckets + 1, "seed=" + seed + " grew from " + buckets + " to "
                        + now + " buckets in one operation");
                buckets = now;
            }
            assertTrue(buckets > 50, "only " + buckets + " buckets");
            m.verify(hash);
            m.verify(tree);
            for (Object k : oracle.keySet().stream().limit(6000).toList()) {
                assertEquals(oracle.remove(k), m.remove(hash, k));
            }
            m.verify(hash);
            assertEquals(oracle.size(), m.size(hash));
        }
    }

    @Test
    void shouldKeepOverflowChainsConsistentWithLargeInlineValues() {
        long seed = Long.getLong("asymnvm.seed", 29);
        Random rnd = new Random(seed);
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.HASH_MAP, Codecs.STRING_ID, "chains");
            Map<Object, String> oracle = new HashMap<>();
            for (int i = 0; i < 3000; i++) {
                String key = "key" + rnd.nextInt(2000);
                if (rnd.nextInt(4) == 0) {
                    assertEquals(oracle.remove(key), m.remove(root, key), "seed=" + seed + " op " + i);
                } else {
                    String v = String.valueOf((char) ('a' + rnd.nextInt(26))).repeat(150 + rnd.nextInt(106));
                    assertEquals(oracle.put(key, v), m.put(root, key, v), "seed=" + seed + " op " + i);
                }
                if (i % 250 == 0) {
                    m.verify(root);
                }
            }
            m.verify(root);
            for (Map.Entry<Object, String> e : oracle.entrySet()) {
                assertEquals(e.getValue(), m.get(root, e.getKey()), "seed=" + seed);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void shouldScanEveryEntryExactlyOnceInBucketChunks() {
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(StructureType.HASH_MAP, Codecs.LONG_ID, "scan");
            int n = 5000;
            for (int from = 0; from < n; from += 250) {
                Object[] keys = new Object[250];
                String[] values = new String[250];
                for (int i = 0; i < 250; i++) {
                    keys[i] = (long) (from + i);
                    values[i] = KeyKind.loadValue(from + i);
                }
                m.putAll(root, keys, values);
            }
            boolean[] seen = new boolean[n];
            long next = 0;
            int chunks = 0;
            while (next >= 0) {
                Object[] r = m.scanBuckets(root, next, 7);
                for (Object[] e : (List<Object[]>) r[0]) {
                    int k = (int) (long) (Long) e[0];
                    assertTrue(!seen[k], "key " + k + " seen twice");
                    seen[k] = true;
                    assertEquals(KeyKind.loadValue(k), e[1]);
                }
                next = (Long) r[1];
                chunks++;
            }
            for (int k = 0; k < n; k++) {
                assertTrue(seen[k], "key " + k + " never seen");
            }
            assertTrue(chunks > 3, "only " + chunks + " chunks");
            assertNull(m.get(root, (long) n));
        }
    }
}
