package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A frontend over TCP survives a backend restart (DESIGN §4): it reconnects within its reconnect timeout, writes
 * every record the backend had not applied again, and keeps committing in the same {@link AsymNvm}. A second
 * incarnation with the same frontend id fences the first, which must then never write again, not even after
 * the backend restarts and its connection could be re-established.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReconnectTest {
    private static final int CELLS = 128;
    private static final int FRONTEND = 3;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final FrontendOptions OPTIONS = FrontendOptions.builder().reconnectTimeoutMillis(30_000).conclude();

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static Cells cells(AsymNvm nvm) {
        return nvm.transactional(Cells.class, new Cells.Impl());
    }

    /** Commits random SYNC and ASYNC writes on its own thread; the oracle holds only returned (acknowledged) ones. */
    private static final class Writer implements Runnable {
        private final Cells cells;
        private final Random random;
        final long[] oracle = new long[CELLS];
        final AtomicLong acknowledged = new AtomicLong();
        final AtomicLong started = new AtomicLong();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        Writer(Cells cells, long seed) {
            this.cells = cells;
            this.random = new Random(seed);
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    int index = random.nextInt(CELLS);
                    long value = random.nextLong();
                    started.incrementAndGet();
                    if (random.nextInt(4) == 0) {
                        cells.setAsync(index, value);
                    } else {
                        cells.set(index, value);
                    }
                    oracle[index] = value;
                    acknowledged.incrementAndGet();
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }
    }

    @Test
    void shouldReconnectToARestartedBackendAndKeepEveryAcknowledgedValue() throws Exception {
        long seed = 0x5EED_0006L;
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            int port = backend.node().port();
            Writer writer;
            try (AsymNvm nvm = backend.open(FRONTEND, OPTIONS)) {
                Cells cells = cells(nvm);
                cells.create(CELLS);
                writer = new Writer(cells, seed);
                Thread thread = new Thread(writer, "reconnect-test-writer");
                thread.start();
                try {
                    Conditions.awaitTrue("300 commits before the restart", WAIT,
                            () -> writer.acknowledged.get() >= 300 || writer.failure.get() != null);
                    backend.stop();
                    long ackedAtStop = writer.acknowledged.get();
                    // the writer is now inside a commit that cannot finish before the backend is back
                    Conditions.awaitTrue("a commit started while the backend is down", WAIT,
                            () -> writer.started.get() > ackedAtStop || writer.failure.get() != null);
                    backend.startAgain(port);
                    Conditions.awaitTrue("300 commits after the restart", WAIT,
                            () -> writer.acknowledged.get() >= ackedAtStop + 300 || writer.failure.get() != null,
                            () -> nvm.stats().toString());
                } finally {
                    writer.stop.set(true);
                    thread.join(TimeUnit.SECONDS.toMillis(60));
                }
                assertNull(writer.failure.get(), () -> "writer failed, seed " + seed + ": " + writer.failure.get());
                assertTrue(nvm.stats().reconnects() >= 1, () -> "reconnected: " + nvm.stats());
                assertArrayEquals(writer.oracle, cells.snapshot(), "seed " + seed);
                cells.set(0, 7);
                writer.oracle[0] = 7;
            }
            try (AsymNvm fresh = backend.open(FRONTEND, OPTIONS)) {
                assertArrayEquals(writer.oracle, cells(fresh).snapshot(),
                        "a fresh frontend on the restarted backend sees every acknowledged value, seed " + seed);
            }
        }
    }

    @Test
    void shouldReconnectWhenTheBackendRestartsBetweenCommits() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            long[] oracle = new long[CELLS];
            try (AsymNvm nvm = backend.open(FRONTEND, OPTIONS)) {
                Cells cells = cells(nvm);
                cells.create(CELLS);
                for (int round = 0; round <= 3; round++) {
                    if (round > 0) {
                        backend.restart();
                    }
                    for (int i = 0; i < 50; i++) {
                        int index = (i * 7 + round) % CELLS;
                        cells.set(index, round * 1000L + i);
                        oracle[index] = round * 1000L + i;
                    }
                    int restarts = round;
                    assertEquals(restarts, nvm.stats().reconnects(), () -> "one reconnect per restart: "
                            + nvm.stats());
                }
                assertArrayEquals(oracle, cells.snapshot());
            }
            try (AsymNvm fresh = backend.open(FRONTEND, OPTIONS)) {
                assertArrayEquals(oracle, cells(fresh).snapshot());
            }
        }
    }

    @Test
    void shouldFailWithConnectionLostWhenTheBackendStaysAway() {
        FrontendOptions impatient = FrontendOptions.builder().reconnectTimeoutMillis(300).conclude();
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm nvm = backend.open(FRONTEND, impatient);
            Cells cells = cells(nvm);
            cells.create(4);
            cells.set(1, 1);
            int port = backend.node().port();
            backend.stop();
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> cells.set(2, 2));
            assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode(), e.getMessage());
            AsymNvmException later = assertThrows(AsymNvmException.class, () -> cells.get(1));
            assertEquals(ErrorCode.CONNECTION_LOST, later.errorCode(), "the frontend stays failed: " + later);
            nvm.close();
            backend.startAgain(port);
            try (AsymNvm fresh = backend.open(FRONTEND, OPTIONS)) {
                assertEquals(1, cells(fresh).get(1), "the acknowledged commit survived");
            }
        }
    }

    @Test
    void shouldFenceTheOlderIncarnationWhenTheSameIdAttachesAgain() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm first = backend.open(FRONTEND, OPTIONS);
            Cells old = cells(first);
            old.create(8);
            old.set(1, 11);
            first.sync();

            try (AsymNvm second = backend.open(FRONTEND, OPTIONS)) {
                Cells current = cells(second);
                assertEquals(11, current.get(1), "the new incarnation sees what the old one committed");

                AsymNvmException e = assertThrows(AsymNvmException.class, () -> old.set(1, 99));
                assertEquals(ErrorCode.STALE_EPOCH, e.errorCode(), e.getMessage());
                AsymNvmException again = assertThrows(AsymNvmException.class, () -> old.set(2, 5));
                assertEquals(ErrorCode.STALE_EPOCH, again.errorCode(), "a fenced frontend stays fenced: " + again);
                first.close(); // must not throw or detach the newer incarnation

                assertEquals(11, current.get(1), "the fenced commit is not visible");
                assertEquals(0, current.get(2));
                current.set(3, 33);
                assertEquals(33, current.get(3), "the new incarnation keeps working");
            }
            try (AsymNvm third = backend.open(FRONTEND, OPTIONS)) {
                assertArrayEquals(new long[] {0, 11, 0, 33, 0, 0, 0, 0}, cells(third).snapshot());
            }
        }
    }

    @Test
    void shouldNotLetAFencedFrontendReattachAfterABackendRestart() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            AsymNvm first = backend.open(FRONTEND, OPTIONS);
            Cells old = cells(first);
            old.create(8);
            old.set(1, 11);
            first.sync();
            AsymNvm second = backend.open(FRONTEND, OPTIONS);
            Cells current = cells(second);
            assertEquals(ErrorCode.STALE_EPOCH, assertThrows(AsymNvmException.class, () -> old.set(2, 5)).errorCode());
            current.set(1, 12);

            backend.restart(); // both connections drop; only the newer incarnation may come back

            AsymNvmException e = assertThrows(AsymNvmException.class, () -> old.set(3, 33));
            assertEquals(ErrorCode.STALE_EPOCH, e.errorCode(), e.getMessage());
            current.set(4, 44);
            first.close();
            second.close();
            try (AsymNvm third = backend.open(FRONTEND, OPTIONS)) {
                assertArrayEquals(new long[] {0, 12, 0, 0, 44, 0, 0, 0}, cells(third).snapshot(),
                        "every acknowledged commit of the newer incarnation, nothing the fenced one attempted");
            }
        }
    }

    /**
     * The older incarnation is idle when the newer one attaches, so it never sees a fenced operation; after a
     * backend restart its next commit reconnects. It must detect that another incarnation attached meanwhile
     * (the attach epoch moved by more than its own attach) and refuse, instead of re-posting its stale records
     * over the newer incarnation's log and acknowledging a commit that is never applied. The refusal fences
     * nobody: the newer incarnation commits on.
     */
    @Test
    void shouldRefuseAnIdleFencedFrontendThatReconnectsAfterABackendRestart() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.TCP)) {
            long[] oracle = new long[8];
            AsymNvm first = backend.open(FRONTEND, OPTIONS);
            Cells old = cells(first);
            old.create(8);
            old.set(1, 11);
            oracle[1] = 11;
            first.sync();
            AsymNvm second = backend.open(FRONTEND, OPTIONS);
            Cells current = cells(second);
            current.set(2, 22);
            oracle[2] = 22;

            backend.restart();
            current.set(3, 33);
            oracle[3] = 33;

            AsymNvmException e = assertThrows(AsymNvmException.class, () -> old.set(5, 55));
            assertEquals(ErrorCode.STALE_EPOCH, e.errorCode(), e.getMessage());
            // the backend refused the stale re-attach before fencing anyone (its expected epoch is not the current
            // one), so the newer incarnation carries on undisturbed
            current.set(4, 44);
            oracle[4] = 44;
            assertEquals(44, current.get(4));
            first.close();
            second.close();
            try (AsymNvm third = backend.open(FRONTEND, OPTIONS)) {
                assertArrayEquals(oracle, cells(third).snapshot(), "acknowledged commits only");
            }
        }
    }
}
