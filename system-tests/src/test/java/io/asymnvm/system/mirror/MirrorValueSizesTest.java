package io.asymnvm.system.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.InspectTool;
import io.asymnvm.core.inspect.HeapInspector;
import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.frontend.PersistentTransaction;
import io.asymnvm.mirror.MirrorNode;
import io.asymnvm.structures.PersistentBTree;
import io.asymnvm.structures.PersistentHashMap;
import io.asymnvm.structures.PersistentMap;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.structures.layout.NodePageLayout;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A SYNC mirror with what real users store: hash-map and B+tree values of every size the structures allow (0 B,
 * 1 B, 100 B, the inline limit and one past it, 1 KiB, a page and one either side, 16 KiB, the maximum), each key
 * overwritten with other sizes and some removed, under the smallest cache a frontend accepts (64 KiB: evicts all the
 * time, a maximum value does not fit in it) and a large one, with the coherence check on. The backend is then lost
 * for good (PM file deleted; over tcp, where a lost backend is a lost connection) while the frontend keeps
 * committing; the mirror is promoted, the frontend fails over, and every acknowledged value must be there byte for
 * byte (an oracle), the cache coherent with the promoted image, the structure's {@code verify()} clean, and a new
 * incarnation of the frontend on the promoted node must read the same after recovery; {@code inspect --deep} of
 * the promoted image finds nothing wrong.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MirrorValueSizesTest {
    private static final int PAGE = 4096;
    static final int[] VALUE_SIZES = {0, 1, 100, NodePageLayout.MAX_INLINE_VALUE,
            NodePageLayout.MAX_INLINE_VALUE + 1, 1024, PAGE - 1, PAGE, PAGE + 1, 16 << 10,
            NodePageLayout.MAX_VALUE_LENGTH};
    private static final int KEYS_PER_SIZE = 2;
    private static final long TINY_CACHE = 64L << 10;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Puts, removes and reads on one structure, each a transaction. */
    public interface Ops {
        @PersistentTransaction
        void put(String key, byte[] value);

        @PersistentTransaction
        void remove(String key);

        @PersistentTransaction(readOnly = true)
        byte[] get(String key);

        @PersistentTransaction(readOnly = true)
        long size();

        @PersistentTransaction(readOnly = true)
        void verify();
    }

    static final class OpsImpl implements Ops {
        private final PersistentMap<String, byte[]> map;

        OpsImpl(AsymNvm nvm, boolean btree) {
            map = btree ? PersistentBTree.open(nvm, "values", Codecs.STRING, Codecs.BYTES)
                    : PersistentHashMap.open(nvm, "values", Codecs.STRING, Codecs.BYTES);
        }

        @Override
        public void put(String key, byte[] value) {
            map.put(key, value);
        }

        @Override
        public void remove(String key) {
            map.remove(key);
        }

        @Override
        public byte[] get(String key) {
            return map.get(key);
        }

        @Override
        public long size() {
            return map.size();
        }

        @Override
        public void verify() {
            map.verify();
        }
    }

    static byte[] value(String key, int round, int length) {
        byte[] v = new byte[length];
        new SplittableRandom(key.hashCode() * 31L + round).nextBytes(v);
        return v;
    }

    private BackendConfiguration config(String name) {
        return BackendConfiguration.builder(dir.resolve(name)).size(64L << 20).maxFrontends(2)
                .semRingCapacity(1L << 20).redoRingCapacity(4L << 20).port(0)
                .credentials(dir.resolve("shared.credentials")).conclude();
    }

    /**
     * Round {@code round}: every key gets a value of another size than the round before (the sizes rotate), and in
     * odd rounds every third key is removed; the oracle holds what was acknowledged.
     */
    private static void round(Ops ops, Map<String, byte[]> oracle, int round) {
        for (int i = 0; i < VALUE_SIZES.length; i++) {
            for (int j = 0; j < KEYS_PER_SIZE; j++) {
                String key = "key-" + i + "-" + j;
                if (round % 2 == 1 && (i + j) % 3 == 0) {
                    ops.remove(key);
                    oracle.remove(key);
                    continue;
                }
                int length = VALUE_SIZES[(i + round * 3 + j) % VALUE_SIZES.length];
                byte[] v = value(key, round, length);
                ops.put(key, v);
                oracle.put(key, v);
            }
        }
    }

    private static void assertMatches(Ops ops, Map<String, byte[]> oracle, String when) {
        for (int i = 0; i < VALUE_SIZES.length; i++) {
            for (int j = 0; j < KEYS_PER_SIZE; j++) {
                String key = "key-" + i + "-" + j;
                byte[] expected = oracle.get(key);
                byte[] actual = ops.get(key);
                if (expected == null) {
                    assertNull(actual, when + ": removed key " + key + " is back");
                } else if (actual == null) {
                    fail(when + ": acknowledged key " + key + " (" + expected.length + " B) is missing");
                } else if (!Arrays.equals(expected, actual)) {
                    fail(when + ": key " + key + " expected " + expected.length + " B, read " + actual.length
                            + " B, first difference at " + Arrays.mismatch(expected, actual));
                }
            }
        }
        assertEquals(oracle.size(), ops.size(), when + ": size");
        ops.verify();
    }

    @ParameterizedTest(name = "{0}, cache {1} bytes")
    @CsvSource({"hash, 65536", "hash, 67108864", "btree, 65536", "btree, 67108864"})
    void everyAcknowledgedValueOfEverySizeSurvivesTheBackendsLossAndThePromotion(String structure, long cache)
            throws Exception {
        assertEquals(TINY_CACHE, 1L << 16, "the smallest cache FrontendOptions accepts");
        boolean btree = structure.equals("btree");
        Map<String, byte[]> oracle = new TreeMap<>();
        FrontendOptions options = FrontendOptions.builder().cacheBytes(cache).verifyCache(true)
                .credentials(dir.resolve("shared.credentials")).reconnectTimeoutMillis(300)
                .failoverTimeoutMillis(20_000).conclude();
        BackendNode backend = BackendNode.start(config("backend.pm"));
        try (MirrorNode mirror = MirrorNode.startLocal(config("mirror.pm"), backend)) {
            Conditions.awaitTrue("the empty mirror is in sync", Duration.ofSeconds(20), mirror::inSync,
                    () -> "state " + mirror.state());
            try (AsymNvm nvm = AsymNvm.connect("tcp", "127.0.0.1:" + backend.port(),
                    List.of("127.0.0.1:" + mirror.node().port()), 0, options)) {
                Ops ops = nvm.transactional(Ops.class, new OpsImpl(nvm, btree));
                for (int r = 0; r < 3; r++) {
                    round(ops, oracle, r);
                }
                nvm.sync(); // the coherence sweep compares every clean page with the backend
                assertMatches(ops, oracle, "before the loss");

                backend.close(); // lost for good, with its PM file
                Files.delete(dir.resolve("backend.pm"));
                CompletableFuture<Long> promote = CompletableFuture.supplyAsync(mirror::promote);
                for (int r = 3; r < 5; r++) {
                    round(ops, oracle, r); // these commits wait for the failover
                }
                long epoch = promote.get(30, TimeUnit.SECONDS);
                assertEquals(1, nvm.stats().failovers(), "failovers");
                assertMatches(ops, oracle, "after the failover to the mirror promoted to epoch " + epoch);
                nvm.sync(); // the coherence sweep, now against the promoted image
            }
            try (AsymNvm fresh = AsymNvm.connect("127.0.0.1", mirror.node().port(), 0, options)) {
                fresh.recover();
                Ops ops = fresh.transactional(Ops.class, new OpsImpl(fresh, btree));
                assertMatches(ops, oracle, "a fresh frontend on the promoted node");
                round(ops, oracle, 5);
                assertMatches(ops, oracle, "new commits on the promoted node");
                fresh.sync();
            }
            mirror.node().awaitReplayed();
        } finally {
            backend.close();
        }
        HeapInspector.Findings deep = InspectTool.deepInspect(dir.resolve("mirror.pm"));
        assertTrue(deep.ok(), () -> "inspect --deep of the promoted image: " + deep.problems());
        System.out.printf("%s, cache %d: %d keys, %d value sizes up to %d B, promoted image inspected%n",
                structure, cache, oracle.size(), VALUE_SIZES.length, NodePageLayout.MAX_VALUE_LENGTH);
    }
}
