package io.asymnvm.frontend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SYNC mirrors on the commit path (issue 9): every semantic record reaches the backend and every mirror at the same
 * position with the same bytes, a commit waits for every node's FLUSH, and it costs one FLUSH per node (one
 * round-trip time, the FLUSHes run in parallel). Mirrors are stand-ins (see {@link MirrorCluster}).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MirrorDualPostTest {
    private static final int FRONTEND = 2;
    private static final int CELLS = 16;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    @Test
    void shouldHoldTheSameSemanticRecordsOnEveryMirrorUpToTheDurableWatermark() {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 2)) {
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                for (int i = 0; i < 200; i++) {
                    cells.set(i % CELLS, i);
                }
                assertEquals(List.of("mirror-0", "mirror-1"), nvm.mirrors());
                byte[] backendRing = MirrorCluster.semanticRing(cluster.backendFile, FRONTEND);
                long watermark = MirrorCluster.durableSemTail(cluster.backendFile, FRONTEND);
                assertTrue(watermark > 200L * SemanticRecordLayout.HEADER_LENGTH, "watermark " + watermark);
                assertEquals(201, txIdsIn(backendRing, watermark), "records before the backend's watermark");
                for (Path mirror : cluster.mirrorFiles) {
                    byte[] mirrorRing = MirrorCluster.semanticRing(mirror, FRONTEND);
                    assertArrayEquals(java.util.Arrays.copyOf(backendRing, (int) watermark),
                            java.util.Arrays.copyOf(mirrorRing, (int) watermark),
                            "semantic ring of " + mirror.getFileName() + " up to the watermark");
                    assertEquals(watermark, MirrorCluster.durableSemTail(mirror, FRONTEND),
                            "durable watermark of " + mirror.getFileName());
                }
            }
        }
    }

    /** Counts the records (transaction ids 1, 2, ...) laid out from ring offset 0 before {@code end}. */
    private static int txIdsIn(byte[] ring, long end) {
        ByteBuffer b = ByteBuffer.wrap(ring).order(ByteOrder.LITTLE_ENDIAN);
        int count = 0;
        int at = 0;
        while (at < end) {
            int length = b.getInt(at + io.asymnvm.core.layout.LogRecordLayout.LENGTH_OFFSET);
            assertEquals(count + 1, b.getLong(at + SemanticRecordLayout.TX_ID_OFFSET), "tx id at " + at);
            count++;
            at += io.asymnvm.core.layout.LogRecordLayout.alignedLength(length);
        }
        return count;
    }

    @Test
    void shouldPostOneFlushPerNodePerCommit() {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            GatedFabric backend = new GatedFabric(cluster.backendFabric());
            GatedFabric mirror = new GatedFabric(cluster.mirrorFabrics().get(0));
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(backend, List.of(mirror), FRONTEND,
                    cluster.options().keepAliveMillis(0).conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                long backendBefore = backend.flushes.get();
                long mirrorBefore = mirror.flushes.get();
                long roundTripsBefore = nvm.stats().commitRoundTrips();
                int commits = 100;
                for (int i = 0; i < commits; i++) {
                    cells.set(i % CELLS, i);
                }
                long backendFlushes = backend.flushes.get() - backendBefore;
                long mirrorFlushes = mirror.flushes.get() - mirrorBefore;
                System.out.printf("%d commits: %d backend FLUSHes, %d mirror FLUSHes, %d commit round trips%n",
                        commits, backendFlushes, mirrorFlushes, nvm.stats().commitRoundTrips() - roundTripsBefore);
                assertEquals(commits, backendFlushes, "one FLUSH per commit to the backend");
                assertEquals(commits, mirrorFlushes, "one FLUSH per commit to the mirror, in parallel");
                assertEquals(commits, nvm.stats().commitRoundTrips() - roundTripsBefore, "one round trip each");
            }
        }
    }

    @Test
    void shouldNotAcknowledgeACommitBeforeTheMirrorsFlushCompleted() throws Exception {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            GatedFabric mirror = new GatedFabric(cluster.mirrorFabrics().get(0));
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), List.of(mirror), FRONTEND,
                    cluster.options().conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                mirror.hold();
                CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> cells.set(3, 42));
                Conditions.awaitTrue("the mirror's FLUSH held back", Duration.ofSeconds(20),
                        () -> mirror.heldFlushes() > 0 || commit.isDone());
                // the backend's FLUSH is not held: only the mirror's keeps the commit from returning
                assertThrows(TimeoutException.class, () -> commit.get(300, TimeUnit.MILLISECONDS),
                        "acknowledged before the mirror's FLUSH completed");
                assertFalse(commit.isDone());
                mirror.release();
                commit.get(20, TimeUnit.SECONDS);
                assertEquals(42, cells.get(3));
            }
        }
    }

    @Test
    void shouldRefuseAMirrorOfAnotherImageOrOneAnsweringAsABackend() {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1);
             MirrorCluster other = MirrorCluster.startLike(cluster, dir.resolve("other-cluster"))) {
            AsymNvmException foreign = assertThrows(AsymNvmException.class, () -> AsymNvm.openWithStandInMirrors(
                    cluster.backendFabric(), List.of(cluster.fabric(other.backend)), FRONTEND,
                    cluster.options().conclude()));
            assertEquals(ErrorCode.IDENTITY_MISMATCH, foreign.errorCode());
            assertTrue(foreign.getMessage().contains("mirror-0"), foreign.getMessage());
            // a stand-in answers as a backend: without the test flag it is refused as a second serving node
            AsymNvmException serving = assertThrows(AsymNvmException.class, () -> AsymNvm.open(
                    cluster.backendFabric(), cluster.mirrorFabrics(), FRONTEND, cluster.options().conclude()));
            assertEquals(ErrorCode.STALE_EPOCH, serving.errorCode());
            assertTrue(serving.getMessage().contains("epoch 1"), serving.getMessage());
            // nothing was left attached: the backend takes the frontend again
            try (AsymNvm nvm = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                    FRONTEND, cluster.options().conclude())) {
                Cells cells = nvm.transactional(Cells.class, new Cells.Impl());
                cells.create(CELLS);
                assertThrows(IllegalArgumentException.class, () -> nvm.dropMirror("mirror-7"));
            }
        }
    }

    @Test
    void shouldRefuseMalformedMirrorEndpoints() {
        FrontendOptions options = FrontendOptions.defaults();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> AsymNvm.connect("tcp", "127.0.0.1:1", List.of("127.0.0.1:70000"), 0, options));
        assertTrue(e.getMessage().contains("127.0.0.1:70000"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> AsymNvm.connect("tcp", "127.0.0.1:1", List.of("127.0.0.1:1"), 0, options));
    }

    /**
     * Commit latency with and without one SYNC mirror, in the same run (prints p50s and their ratio; run with
     * {@code -Pslow}). Both frontends commit to the same backend; the mirrored one also to a stand-in mirror.
     */
    @Tag("slow")
    @Test
    void shouldReportCommitLatencyWithAndWithoutAMirror() {
        try (MirrorCluster cluster = MirrorCluster.start(dir, 1)) {
            try (AsymNvm plain = AsymNvm.open(cluster.backendFabric(), 1, cluster.options().conclude());
                 AsymNvm mirrored = AsymNvm.openWithStandInMirrors(cluster.backendFabric(), cluster.mirrorFabrics(),
                         FRONTEND, cluster.options().conclude())) {
                Cells a = plain.transactional(Cells.class, new Cells.Impl());
                Cells b = mirrored.transactional(Cells.class, new Cells.Impl());
                a.create(CELLS);
                b.create(CELLS);
                int rounds = 5;
                int perRound = 500;
                long[] plainNanos = new long[rounds * perRound];
                long[] mirroredNanos = new long[rounds * perRound];
                for (int r = 0; r < rounds; r++) { // interleaved blocks: both see the same machine load
                    for (int i = 0; i < perRound; i++) {
                        long t0 = System.nanoTime();
                        a.set(i % CELLS, i);
                        plainNanos[r * perRound + i] = System.nanoTime() - t0;
                    }
                    for (int i = 0; i < perRound; i++) {
                        long t0 = System.nanoTime();
                        b.set(i % CELLS, i);
                        mirroredNanos[r * perRound + i] = System.nanoTime() - t0;
                    }
                }
                java.util.Arrays.sort(plainNanos);
                java.util.Arrays.sort(mirroredNanos);
                long p50Plain = plainNanos[plainNanos.length / 2] / 1000;
                long p50Mirrored = mirroredNanos[mirroredNanos.length / 2] / 1000;
                System.out.printf("commit p50: unreplicated %d us, one SYNC mirror %d us, ratio %.2f%n", p50Plain,
                        p50Mirrored, (double) p50Mirrored / p50Plain);
                assertEquals(perRound - 1, b.get((perRound - 1) % CELLS));
                assertEquals(mirrored.stats().commits(), plain.stats().commits());
            }
        }
    }
}
