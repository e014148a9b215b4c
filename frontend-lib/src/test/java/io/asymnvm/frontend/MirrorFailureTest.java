package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SYNC mirror that lags, dies or comes back (issue 9): ring space is held until every mirror released it, commits
 * are never acknowledged without a configured mirror (they wait for it, then fail naming it), a mirror that comes
 * back is reconnected and gets the retained records again, and a mirror dropped by the operator is no longer
 * waited for. The stand-in mirror never applies anything (it receives no redo).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class MirrorFailureTest {
    private static final int FRONTEND = 1;
    private static final int CELLS = 16;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldNotReuseRingSpaceAMirrorHasNotReleasedUntilItIsDropped() throws Exception {
        long ring = 8192;
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1, 0,
                b -> b.semRingCapacity(ring).redoRingCapacity(4 * ring))) {
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().pollIntervalMicros(200).conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                long[] oracle = new long[CELLS];
                AtomicLong acknowledged = new AtomicLong();
                AtomicReference<Throwable> failure = new AtomicReference<>();
                int total = 1000; // several times what one ring holds
                Thread writer = new Thread(() -> {
                    try {
                        for (int i = 0; i < total; i++) {
                            cells.set(i % CELLS, i + 1);
                            oracle[i % CELLS] = i + 1;
                            acknowledged.incrementAndGet();
                        }
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                }, "ring-release-writer");
                writer.start();
                try {
                    // the backend applies and releases, the mirror does not: the writer must stop at one ring
                    // once the pages are cached (20 commits) the only retry left is a wait for ring space
                    Conditions.awaitTrue("20 commits", WAIT, () -> acknowledged.get() >= 20 || !writer.isAlive());
                    long retriesBefore = nvm.stats().retries();
                    Conditions.awaitTrue("a commit waiting for ring space", WAIT,
                            () -> nvm.stats().retries() > retriesBefore || !writer.isAlive());
                    long atStall = acknowledged.get();
                    byte[] mirrorRing = MirrorCluster.semanticRing(cluster.mirrorFiles.get(0), FRONTEND);
                    assertEquals(1, ByteBuffer.wrap(mirrorRing).order(ByteOrder.LITTLE_ENDIAN)
                            .getLong(SemanticRecordLayout.TX_ID_OFFSET), "the mirror's first record (tx 1) kept");
                    assertTrue(atStall < ring / 64, "at most one ring of 64-byte records committed while the "
                            + "mirror holds the ring: " + atStall);
                    System.out.printf("writer waited for ring space after %d commits (ring %d bytes)%n", atStall,
                            ring);
                    assertNull(failure.get());
                    nvm.dropMirror("mirror-0");
                    assertEquals(List.of(), nvm.mirrors());
                    Conditions.awaitTrue("every commit after the drop", WAIT,
                            () -> acknowledged.get() == total || failure.get() != null);
                } finally {
                    writer.join(TimeUnit.SECONDS.toMillis(30));
                }
                assertNull(failure.get(), () -> "writer failed: " + failure.get());
                assertArrayEquals(oracle, cells.snapshot());
            }
        }
    }

    @Test
    void shouldFailCommitsNamingAnUnreachableMirrorAndProceedOnceItIsDropped() {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().mirrorReconnectTimeoutMillis(300).conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                cells.set(0, 10);
                cluster.stopMirror(0);
                for (int attempt = 0; attempt < 2; attempt++) {
                    int cell = 1 + attempt;
                    AsymNvmException e = assertThrows(AsymNvmException.class, () -> cells.set(cell, 11));
                    assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
                    assertTrue(e.getMessage().contains("mirror-0"), e.getMessage());
                }
                nvm.dropMirror("mirror-0");
                cells.set(3, 13);
                assertEquals(10, cells.get(0));
                assertEquals(13, cells.get(3));
            }
        }
    }

    @Test
    void shouldReleaseACommitWaitingForADeadMirrorWhenItIsDropped() throws Exception {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().mirrorReconnectTimeoutMillis(60_000).conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                cluster.stopMirror(0);
                long before = MirrorCluster.lastPostedTxId(cluster.backendFile, FRONTEND);
                CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> cells.set(5, 55));
                Conditions.awaitTrue("the record posted to the backend", WAIT,
                        () -> MirrorCluster.lastPostedTxId(cluster.backendFile, FRONTEND) > before);
                assertFalse(commit.isDone(), "acknowledged although its SYNC mirror is down: " + commit);
                nvm.dropMirror("mirror-0");
                commit.get(20, TimeUnit.SECONDS); // long before the 60 s mirror reconnect timeout
                assertEquals(55, cells.get(5));
            }
        }
    }

    @Test
    void shouldRepostRetainedRecordsToAMirrorThatComesBack() throws Exception {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().mirrorReconnectTimeoutMillis(30_000).conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                for (int i = 0; i < 50; i++) {
                    cells.set(i % CELLS, i);
                }
                int port = cluster.mirrors.get(0).port();
                cluster.stopMirror(0);
                CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 50; i++) {
                        cells.set(i % CELLS, 100 + i);
                    }
                });
                cluster.startMirrorAgain(0, port);
                commit.get(30, TimeUnit.SECONDS);
                assertTrue(nvm.stats().commits() >= 101);
            }
            // the mirror holds every record, up to the backend's durable watermark (the frontend detached cleanly)
            long watermark = MirrorCluster.durableSemTail(cluster.backendFile, FRONTEND);
            byte[] backend = MirrorCluster.semanticRing(cluster.backendFile, FRONTEND);
            byte[] mirror = MirrorCluster.semanticRing(cluster.mirrorFiles.get(0), FRONTEND);
            assertArrayEquals(Arrays.copyOf(backend, (int) watermark), Arrays.copyOf(mirror, (int) watermark));
            assertEquals(watermark, MirrorCluster.durableSemTail(cluster.mirrorFiles.get(0), FRONTEND));
        }
    }
}
