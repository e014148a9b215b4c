package io.asymnvm.structures;

import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.structures.codec.Codecs;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The short form of the million-key load: 20,000 keys put into each structure, one SYNC transaction per put (so
 * the rate printed is the commit rate of single-key puts), then every key read back, the PM image reopened
 * through a fresh frontend, and every key read back again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MapLoadTest {
    static final int KEYS = 20_000;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (Nvm.Transport t : Nvm.Transport.values()) {
            for (StructureType s : StructureType.values()) {
                out.add(Arguments.of(s, t));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void shouldLoadAndReadBackEveryKeyAcrossReopen(StructureType type, Nvm.Transport transport) {
        long seed = Long.getLong("asymnvm.seed", 20_000);
        List<Long> order = new ArrayList<>(KEYS);
        for (long i = 0; i < KEYS; i++) {
            order.add(i);
        }
        Collections.shuffle(order, new Random(seed));
        try (Nvm nvm = Nvm.start(dir, transport)) {
            MapOps m = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            long root = m.create(type, Codecs.STRING_ID, "load");
            EngineStats before = nvm.nvm().stats();
            long start = System.nanoTime();
            for (long i : order) {
                m.put(root, KeyKind.STRING.key(i), KeyKind.loadValue(i));
            }
            long nanos = System.nanoTime() - start;
            EngineStats after = nvm.nvm().stats();
            System.out.printf("[load] %s over %s: %d single-key put transactions in %d ms = %.0f puts/s"
                            + " (%d re-executions, %d page fetches, %d control round trips)%n",
                    type.displayName(), transport, KEYS, nanos / 1_000_000, KEYS * 1e9 / nanos,
                    after.retries() - before.retries(), after.fetchRoundTrips() - before.fetchRoundTrips(),
                    after.controlRoundTrips() - before.controlRoundTrips());
            assertEquals(KEYS, m.size(root), "seed=" + seed);
            readBackEveryKey(m, root, type, KEYS, "seed=" + seed + " before reopen");
            m.verify(root);

            nvm.reopen();
            MapOps again = nvm.nvm().transactional(MapOps.class, new MapOps.Impl());
            readBackEveryKey(again, root, type, KEYS, "seed=" + seed + " after reopen");
            again.verify(root);
        }
    }

    /**
     * Reads every key: first a scan in chunks (which also warms the page cache one chunk at a time, so that
     * the batched reads after it do not restart their transaction on every miss), then batched gets.
     */
    static void readBackEveryKey(MapOps m, long root, StructureType type, int keys, String ctx) {
        boolean[] seen = new boolean[keys];
        int count = 0;
        if (type == StructureType.BTREE) {
            Object from = null;
            while (true) {
                List<Object[]> chunk = m.range(root, from, false, null, true, false, 500);
                for (Object[] e : chunk) {
                    count += mark(seen, e, ctx);
                }
                if (chunk.size() < 500) {
                    break;
                }
                from = chunk.get(chunk.size() - 1)[0];
            }
        } else {
            long next = 0;
            while (next >= 0) {
                Object[] r = m.scanBuckets(root, next, 16);
                @SuppressWarnings("unchecked")
                List<Object[]> chunk = (List<Object[]>) r[0];
                for (Object[] e : chunk) {
                    count += mark(seen, e, ctx);
                }
                next = (Long) r[1];
            }
        }
        assertEquals(keys, count, ctx + " keys seen by the scan");
        for (int from = 0; from < keys; from += 500) {
            Object[] batch = new Object[Math.min(500, keys - from)];
            for (int i = 0; i < batch.length; i++) {
                batch[i] = KeyKind.STRING.key(from + i);
            }
            String[] values = m.getAll(root, batch);
            for (int i = 0; i < batch.length; i++) {
                assertEquals(KeyKind.loadValue(from + i), values[i], ctx + " get " + batch[i]);
            }
        }
    }

    private static int mark(boolean[] seen, Object[] entry, String ctx) {
        int i = Integer.parseInt(((String) entry[0]).substring(3));
        assertEquals(false, seen[i], ctx + " key seen twice: " + entry[0]);
        seen[i] = true;
        assertEquals(KeyKind.loadValue(i), entry[1], ctx + " value of " + entry[0]);
        return 1;
    }
}
