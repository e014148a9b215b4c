package io.asymnvm.frontend;

import io.asymnvm.core.fabric.FabricCounters;
import io.asymnvm.frontend.tx.EngineStats;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The commit path costs one round trip (DESIGN §2 step 3), counted exactly: every round trip the fabric waited
 * for is attributed by the engine to commits, fetches, control calls or background work. Run over the local
 * fabric and over TCP to an in-process backend.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RoundTripTest {
    private static final int CELLS = 64;
    private static final Duration QUIET = Duration.ofSeconds(20);
    private static final Duration STABLE = Duration.ofMillis(20);

    /**
     * No background durability flush and no redo shipped while the test counts, so that nothing but the caller
     * can make its transaction durable: each SYNC commit then waits for exactly one FLUSH of its own.
     */
    private static final FrontendOptions QUIET_BACKGROUND = FrontendOptions.builder()
            .asyncFlushMicros(10_000_000)
            .redoBatch(1 << 20, 16 << 20, 10_000_000)
            .conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    /** Engine-attributed round trips: every purpose the engine waits on the network for. */
    private static long attributed(EngineStats s) {
        return s.commitRoundTrips() + s.fetchRoundTrips() + s.controlRoundTrips() + s.backgroundRoundTrips()
                + s.verifyRoundTrips();
    }

    /** A moment when the background agent has nothing to do, so fabric and engine counters agree. */
    private record Quiet(EngineStats stats, FabricCounters.Snapshot counters) {
    }

    /**
     * Makes everything applied, so the background agent has nothing left to poll or flush, then waits until
     * neither counter set has changed for {@link #STABLE}: a background poll that was already in flight when
     * {@code sync()} returned (counted by the fabric when its wait starts, by the engine when it ends) has
     * finished by then.
     */
    private static Quiet quiesce(AsymNvm nvm) {
        nvm.sync();
        Quiet[] last = {null};
        long[] since = {System.nanoTime()};
        Conditions.awaitTrue("quiescent counters", QUIET, () -> {
            Quiet now = new Quiet(nvm.stats(), nvm.counters());
            if (!now.equals(last[0])) {
                last[0] = now;
                since[0] = System.nanoTime();
                return false;
            }
            return System.nanoTime() - since[0] >= STABLE.toNanos();
        });
        return last[0];
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldCostExactlyOneRoundTripPerSyncCommit(TestBackend.Transport transport) {
        long seed = 0x5EED_0002L;
        Random random = new Random(seed);
        int n = 300;
        long[] oracle = new long[CELLS];
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, QUIET_BACKGROUND)) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(CELLS);
            for (int i = 0; i < CELLS; i++) {
                cells.set(i, 0); // warm-up: slab grant, page fetches, first flushes
            }
            Quiet before = quiesce(nvm);

            for (int i = 0; i < n; i++) {
                int index = random.nextInt(CELLS);
                long value = random.nextLong();
                cells.set(index, value);
                oracle[index] = value;
            }

            EngineStats during = nvm.stats();
            assertEquals(before.stats().commits() + n, during.commits(), "seed " + seed);
            assertEquals(n, during.commitRoundTrips() - before.stats().commitRoundTrips(),
                    () -> transport + ": " + n + " SYNC commits, one round trip each: " + during + ", seed " + seed);
            assertEquals(0, during.fetchRoundTrips() - before.stats().fetchRoundTrips(), "all pages were cached");
            assertEquals(n, nvm.counters().flushes() - before.counters().flushes(), "one FLUSH per commit");

            Quiet after = quiesce(nvm);
            long fabric = after.counters().roundTripsWaited() - before.counters().roundTripsWaited();
            long engine = attributed(after.stats()) - attributed(before.stats());
            assertEquals(fabric, engine, () -> transport + ": every round trip the fabric waited for is attributed, "
                    + "before " + before + ", after " + after);
            assertArrayEquals(oracle, cells.snapshot(), "seed " + seed);
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldCostNoCommitRoundTripForAsyncCommits(TestBackend.Transport transport) {
        long seed = 0x5EED_0003L;
        Random random = new Random(seed);
        int n = 300;
        long[] oracle = new long[CELLS];
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            cells.create(CELLS);
            for (int i = 0; i < CELLS; i++) {
                cells.setAsync(i, 0);
            }
            Quiet before = quiesce(nvm);

            for (int i = 0; i < n; i++) {
                int index = random.nextInt(CELLS);
                long value = random.nextLong();
                cells.setAsync(index, value);
                oracle[index] = value;
            }
            EngineStats during = nvm.stats();
            assertEquals(before.stats().commits() + n, during.commits());
            assertEquals(before.stats().commitRoundTrips(), during.commitRoundTrips(),
                    () -> transport + ": ASYNC commits do not wait: " + during);

            long last = during.lastTxId();
            Conditions.awaitTrue("background durability of tx " + last, QUIET,
                    () -> nvm.stats().durableTxId() >= last, () -> nvm.stats().toString());
            assertTrue(nvm.stats().backgroundRoundTrips() > before.stats().backgroundRoundTrips(),
                    "the agent made them durable");

            Quiet after = quiesce(nvm);
            assertEquals(before.stats().commitRoundTrips(), after.stats().commitRoundTrips());
            assertEquals(after.counters().roundTripsWaited() - before.counters().roundTripsWaited(),
                    attributed(after.stats()) - attributed(before.stats()),
                    () -> transport + ": before " + before + ", after " + after);
            assertArrayEquals(oracle, cells.snapshot(), "seed " + seed);
        }
    }

    @ParameterizedTest
    @EnumSource(TestBackend.Transport.class)
    void shouldShareRoundTripsAcrossConcurrentCommitters(TestBackend.Transport transport) throws Exception {
        int threads = 4;
        int perThread = 400;
        long seed = 0x5EED_0004L;
        try (TestBackend backend = TestBackend.start(dir, transport);
             AsymNvm nvm = backend.open(0, FrontendOptions.defaults())) {
            Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
            // cells [0, threads): per-thread last value; [threads, CELLS): shared accounts for transfers
            cells.create(CELLS);
            for (int i = threads; i < CELLS; i++) {
                cells.set(i, 1_000);
            }
            long total = 1_000L * (CELLS - threads);
            Quiet before = quiesce(nvm);

            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int me = t;
                    futures.add(pool.submit(() -> {
                        Random random = new Random(seed + me);
                        for (int i = 1; i <= perThread; i++) {
                            int from = threads + random.nextInt(CELLS - threads);
                            int to = threads + random.nextInt(CELLS - threads);
                            cells.add(from, to, random.nextInt(50));
                            cells.set(me, i);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(100, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }

            Quiet after = quiesce(nvm);
            long commits = after.stats().commits() - before.stats().commits();
            long commitRoundTrips = after.stats().commitRoundTrips() - before.stats().commitRoundTrips();
            long flushes = after.counters().flushes() - before.counters().flushes();
            assertEquals(2L * threads * perThread, commits);
            assertTrue(commitRoundTrips <= commits, () -> "commit round trips " + commitRoundTrips
                    + " > commits " + commits);
            assertTrue(flushes <= commits, () -> "FLUSHes " + flushes + " > commits " + commits);
            assertEquals(after.counters().roundTripsWaited() - before.counters().roundTripsWaited(),
                    attributed(after.stats()) - attributed(before.stats()), () -> "before " + before
                            + ", after " + after);
            System.out.printf("%s group commit: %d commits, %d commit round trips, %d FLUSHes%n", transport, commits,
                    commitRoundTrips, flushes);

            long[] state = cells.snapshot();
            for (int t = 0; t < threads; t++) {
                assertEquals(perThread, state[t], "thread " + t + "'s last write, seed " + seed);
            }
            long sum = 0;
            for (int i = threads; i < CELLS; i++) {
                sum += state[i];
            }
            assertEquals(total, sum, "transfers conserve the total, seed " + seed);
        }
    }
}
