package io.asymnvm.examples.kv;

import io.asymnvm.frontend.AsymNvm;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.RunCounts;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No wasted runs on real structures (issue 8 goal 4): a read of k keys whose pages are cold runs as many times as
 * the structure has cold levels on the way to them, not once per cold page. A collecting attempt records every
 * miss of a level at once and one batch fetches them, so 64 keys cost at most one run more than one key (before:
 * about one run per cold page, 64 keys on a cold frontend took dozens). Counted exactly by the engine.
 */
@Timeout(60)
class ColdReadRunsTest {
    private static final int KEYS = 20_000;
    private static final int[] K = {1, 8, 64};

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static KeyValueStore store(AsymNvm nvm, StructureKind kind) {
        return nvm.transactional(KeyValueStore.class, new KeyValueStoreImpl(nvm, kind, "kv"));
    }

    private static String key(int i) {
        return "key" + i;
    }

    @ParameterizedTest
    @EnumSource(StructureKind.class)
    void shouldNotRunMoreOftenForMoreColdKeys(StructureKind kind) {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            KeyValueStore kv = store(nvm, kind);
            for (int first = 0; first < KEYS; first += 500) {
                String[] keys = new String[500];
                String[] values = new String[500];
                for (int i = 0; i < 500; i++) {
                    keys[i] = key(first + i);
                    values[i] = "v" + (first + i);
                }
                kv.putAll(keys, values);
            }
        }
        long[] runs = new long[K.length];
        long[] reads = new long[K.length];
        for (int j = 0; j < K.length; j++) {
            int k = K[j];
            try (AsymNvm nvm = AsymNvm.embedded(dir)) { // a new incarnation: nothing cached
                KeyValueStore kv = store(nvm, kind);
                kv.get(key(KEYS - 1)); // the structure's header and the path to one key are cached
                String[] keys = new String[k];
                String[] expected = new String[k];
                for (int i = 0; i < k; i++) {
                    int n = (int) ((long) i * KEYS / k + 17); // spread over the whole structure
                    keys[i] = key(n);
                    expected[i] = "v" + n;
                }
                EngineStats before = nvm.stats();
                RunCounts.Snapshot runsBefore = nvm.runCounts();
                assertArrayEquals(expected, kv.getAll(keys));
                runs[j] = nvm.runCounts().minus(runsBefore).max();
                reads[j] = nvm.stats().fetchRoundTrips() - before.fetchRoundTrips();
            }
        }
        for (int j = 0; j < K.length; j++) {
            System.out.printf("%s: %d cold keys read in one call: %d runs, %d READs%n", kind, K[j], runs[j],
                    reads[j]);
        }
        assertTrue(runs[0] >= 2, "one cold key is fetched once at least");
        assertTrue(runs[2] <= runs[0] + 1, () -> kind + ": 64 cold keys took " + runs[2] + " runs, one took "
                + runs[0]);
    }
}
