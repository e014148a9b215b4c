package io.asymnvm.frontend;

import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.testsupport.ShmTempDirFactory;
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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The naive baseline mode ({@link ExecutionMode#NAIVE}, issue 8 goal 6): no page cache, every transaction in the
 * heap before it returns, and still atomic, durable and recoverable.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NaiveModeTest {
    private static final int CELLS = 32;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static FrontendOptions options(ExecutionMode mode) {
        return FrontendOptions.builder().mode(mode).conclude();
    }

    private static Cells cells(AsymNvm nvm) {
        return nvm.transactional(Cells.class, new Cells.Impl());
    }

    @Test
    void shouldReadRemotelyEveryTimeWhereTheDesignReadsFromItsCache() {
        for (ExecutionMode mode : ExecutionMode.values()) {
            Path sub = dir.resolve(mode.cliName());
            try (AsymNvm nvm = AsymNvm.embedded(sub, options(mode))) {
                Cells cells = cells(nvm);
                cells.create(CELLS);
                cells.set(3, 42);
                assertEquals(42, cells.get(3)); // warm the design's cache
                long before = nvm.stats().fetchRoundTrips();
                for (int i = 0; i < 10; i++) {
                    assertEquals(42, cells.get(3));
                }
                long fetches = nvm.stats().fetchRoundTrips() - before;
                if (mode == ExecutionMode.NAIVE) {
                    assertTrue(fetches >= 10, "naive: 10 reads of a cell must cost at least 10 remote READs, were "
                            + fetches);
                } else {
                    assertEquals(0, fetches, "design: cached reads must not fetch");
                }
            }
        }
    }

    @Test
    void shouldApplyEveryTransactionToTheHeapBeforeItReturns() {
        try (AsymNvm nvm = AsymNvm.embedded(dir, options(ExecutionMode.NAIVE))) {
            Cells cells = cells(nvm);
            cells.create(CELLS);
            for (int i = 0; i < 20; i++) {
                cells.set(i % CELLS, i);
                EngineStats s = nvm.stats();
                assertEquals(s.lastTxId(), s.appliedTxId(), "naive: tx " + s.lastTxId() + " returned before the "
                        + "backend applied it (applied " + s.appliedTxId() + ")");
            }
        }
    }

    @Test
    void shouldPayOnePersistedRoundTripPerStore() {
        for (ExecutionMode mode : ExecutionMode.values()) {
            try (AsymNvm nvm = AsymNvm.embedded(dir.resolve(mode.cliName()), options(mode))) {
                Cells cells = cells(nvm);
                cells.create(CELLS);
                cells.set(0, 100);
                long before = nvm.counters().flushes();
                cells.add(0, 9, 7); // two stores, in cells far apart
                long flushes = nvm.counters().flushes() - before;
                if (mode == ExecutionMode.NAIVE) {
                    assertTrue(flushes >= 3, "naive: the commit FLUSH and one per store, were " + flushes);
                } else {
                    // the commit FLUSH, and at most one the agent thread may post meanwhile
                    assertTrue(flushes <= 2, "design: one FLUSH per commit, were " + flushes);
                }
                assertEquals(93, cells.get(0));
                assertEquals(7, cells.get(9));
            }
        }
    }

    @Test
    void shouldKeepTransfersAtomicAcrossThreadsAndACrash() throws Exception {
        long seed = 0x5EED_0A1FL;
        int threads = 3;
        int transfers = 150;
        List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
        try (AsymNvm nvm = AsymNvm.embedded(dir, options(ExecutionMode.NAIVE))) {
            Cells cells = cells(nvm);
            cells.create(CELLS);
            for (int i = 0; i < CELLS; i++) {
                cells.set(i, 1000);
            }
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Random rnd = new Random(seed + t);
                Thread w = new Thread(() -> {
                    try {
                        for (int i = 0; i < transfers; i++) {
                            cells.add(rnd.nextInt(CELLS), rnd.nextInt(CELLS), 1 + rnd.nextInt(9));
                            assertEquals(1000L * CELLS, cells.sum(), "seed=" + seed + ": a transfer was seen half");
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }, "naive-transfers-" + t);
                workers.add(w);
                w.start();
            }
            for (Thread w : workers) {
                w.join();
            }
            assertEquals(List.of(), failures, "seed=" + seed);
            assertEquals(CELLS + 1 + (long) threads * transfers, nvm.stats().commits(), "seed=" + seed);
            cells.set(0, cells.get(0) + 5);
            cells.add(0, 1, 5);
            nvm.crash();
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir, options(ExecutionMode.NAIVE))) {
            assertEquals(1000L * CELLS + 5, cells(nvm).sum(), "seed=" + seed + ": lost or half a transaction");
        }
    }

    @Test
    void shouldNameTheValidModesForABadOne() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ExecutionMode.parse("fast"));
        assertTrue(e.getMessage().contains("'fast'") && e.getMessage().contains("naive"), e.getMessage());
        assertEquals(ExecutionMode.NAIVE, ExecutionMode.parse("Naive"));
        assertThrows(IllegalArgumentException.class, () -> FrontendOptions.builder().mode(null).conclude());
    }
}
