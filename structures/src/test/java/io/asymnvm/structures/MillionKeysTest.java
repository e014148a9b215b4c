package io.asymnvm.structures;

import io.asymnvm.frontend.FrontendOptions;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Acceptance load: 1,000,000 keys into a B+tree and into a hash map (shuffled order, 250 puts per transaction),
 * the frontend closed, a fresh frontend attached to the same PM image, and every key of both read back, then
 * both structures verified. Slow: run with {@code -Pslow} or {@code -Dsurefire.excludedGroups= -Dgroups=slow}.
 */
@Tag("slow")
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class MillionKeysTest {
    private static final int KEYS = 1_000_000;
    private static final int BATCH = 250;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldLoadAMillionKeysIntoEachStructureAndReadThemAllBackInAFreshFrontend() {
        long seed = Long.getLong("asymnvm.seed", 1_000_000);
        FrontendOptions options = FrontendOptions.builder().embeddedSizeBytes(1L << 30).cacheBytes(1L << 30)
                .conclude();
        List<Long> order = new ArrayList<>(KEYS);
        for (long i = 0; i < KEYS; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(seed));
        long[] roots = new long[2];
        StructureType[] types = {StructureType.BTREE, StructureType.HASH_MAP};
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL, options)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            for (int t = 0; t < types.length; t++) {
                roots[t] = m.create(types[t], Codecs.STRING_ID, "million-" + t);
                long start = System.nanoTime();
                for (int from = 0; from < KEYS; from += BATCH) {
                    Object[] keys = new Object[BATCH];
                    String[] values = new String[BATCH];
                    for (int i = 0; i < BATCH; i++) {
                        long k = order.get(from + i);
                        keys[i] = KeyKind.STRING.key(k);
                        values[i] = KeyKind.loadValue(k);
                    }
                    m.putAll(roots[t], keys, values);
                }
                long nanos = System.nanoTime() - start;
                System.out.printf("[million] %s: %d keys in %d ms = %.0f puts/s (%d per transaction), shape %d%n",
                        types[t].displayName(), KEYS, nanos / 1_000_000, KEYS * 1e9 / nanos, BATCH,
                        m.shape(roots[t]));
                assertEquals(KEYS, m.size(roots[t]), "seed=" + seed);
            }
        }
        try (Nvm nvm = Nvm.start(dir, Nvm.Transport.LOCAL, options)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            for (int t = 0; t < types.length; t++) {
                long start = System.nanoTime();
                MapLoadTest.readBackEveryKey(m, roots[t], types[t], KEYS, "seed=" + seed + " " + types[t]);
                m.verify(roots[t]);
                System.out.printf("[million] %s: every key read back and verified in a fresh frontend in %d ms%n",
                        types[t].displayName(), (System.nanoTime() - start) / 1_000_000);
            }
        }
    }
}
