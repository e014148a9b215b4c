package io.asymnvm.frontend;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both log rings are small (16 pages), so thousands of transactions wrap each of them many times: records are
 * padded at the ring end, ring space is reclaimed only as the backend replays, and a full ring makes the
 * frontend wait for replay. Every value is checked against an oracle after a clean close and reopen.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RingWrapTest {
    private static final long RING = 16 * 4096;
    private static final int CELLS = 512;
    private static final int TRANSACTIONS = 20_000;
    private static final UnaryOperator<BackendConfiguration.Builder> SMALL_RINGS =
            b -> b.semRingCapacity(RING).redoRingCapacity(RING);

    /** Redo batching profiles of the frontend. */
    enum Batching {
        DEFAULT(FrontendOptions.defaults()),
        /** One transaction per batch of at most 4 KiB: the redo ring gets a record per transaction. */
        TINY(FrontendOptions.builder().redoBatch(1, 4096, 10).conclude()),
        /** Batches bounded only by the ring (a quarter of it): ring pressure decides when redo ships. */
        RING_BOUND(FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000).conclude());

        final FrontendOptions options;

        Batching(FrontendOptions options) {
            this.options = options;
        }
    }

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    static Stream<Arguments> profiles() {
        return Stream.of(
                Arguments.of(Batching.DEFAULT, TestBackend.Transport.LOCAL),
                Arguments.of(Batching.TINY, TestBackend.Transport.LOCAL),
                Arguments.of(Batching.RING_BOUND, TestBackend.Transport.LOCAL),
                Arguments.of(Batching.DEFAULT, TestBackend.Transport.TCP),
                Arguments.of(Batching.TINY, TestBackend.Transport.TCP));
    }

    @ParameterizedTest(name = "{0} batching over {1}")
    @MethodSource("profiles")
    void shouldWrapBothRingsManyTimesAndKeepEveryValue(Batching batching, TestBackend.Transport transport) {
        long seed = 0x5EED_0005L + batching.ordinal();
        Random random = new Random(seed);
        long[] oracle = new long[CELLS];
        EngineStats stats;
        try (TestBackend backend = TestBackend.start(dir, transport, SMALL_RINGS)) {
            try (AsymNvm nvm = backend.open(0, batching.options)) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                for (int i = 0; i < TRANSACTIONS; i++) {
                    int index = random.nextInt(CELLS);
                    switch (random.nextInt(4)) {
                        case 0 -> {
                            long value = random.nextLong();
                            cells.set(index, value);
                            oracle[index] = value;
                        }
                        case 1, 2 -> {
                            long value = random.nextLong();
                            cells.setAsync(index, value);
                            oracle[index] = value;
                        }
                        default -> {
                            int to = random.nextInt(CELLS);
                            long amount = random.nextInt(1_000);
                            cells.add(index, to, amount);
                            oracle[index] -= amount;
                            oracle[to] += amount;
                        }
                    }
                    if (i % 5_000 == 4_999) {
                        assertArrayEquals(oracle, cells.snapshot(), "after " + (i + 1) + " transactions, "
                                + batching + " over " + transport + ", seed " + seed);
                    }
                }
                stats = nvm.stats();
                long semBytes = backend.node().frontendLog(0).checkpoint().semHead();
                long redoBytes = backend.node().frontendLog(0).checkpoint().redoHead();
                assertTrue(semBytes > 10 * RING, () -> "semantic ring wrapped 10+ times: head " + semBytes);
                assertTrue(redoBytes > 5 * RING, () -> "redo ring wrapped 5+ times: head " + redoBytes);
                System.out.printf("%s/%s: %s; semantic ring laps %d, redo ring laps %d%n", batching, transport, stats,
                        semBytes / RING, redoBytes / RING);
            }
            backend.restart();
            try (AsymNvm nvm = backend.open(0, batching.options)) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                assertEquals(stats.lastTxId(), nvm.stats().appliedTxId(), "every transaction applied");
                assertArrayEquals(oracle, cells.snapshot(), batching + " over " + transport + " after reopen, seed "
                        + seed);
                cells.set(0, 1);
                oracle[0] = 1;
                assertArrayEquals(oracle, cells.snapshot(), "the reopened frontend keeps committing");
            }
        }
    }
}
