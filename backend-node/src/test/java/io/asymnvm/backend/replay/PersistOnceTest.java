package io.asymnvm.backend.replay;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.region.MappedRegion;
import io.asymnvm.recovery.crash.SimulatedPmRegion;
import io.asymnvm.recovery.crash.SimulatedPowerFailure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Random;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.checkpoint;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.heap;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Write amplification of the backend's persist paths (issue 8 goal 7): a redo batch a FLUSH already persisted is
 * not persisted again by the replayer, one no FLUSH covered still is, semantic records the FLUSH persisted are not
 * persisted again by the watermark check, and the heap is persisted in whole cache lines rather than widened to
 * pages. A power cut at every persist point after such a FLUSH loses nothing.
 */
@Timeout(120)
class PersistOnceTest {
    @TempDir
    Path dir;

    private BackendNode start(PersistCountingRegion region) {
        BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("counted.pm")).conclude(), region);
        region.classify(node.superblock());
        return node;
    }

    private PersistCountingRegion countingRegion() {
        return new PersistCountingRegion(MappedRegion.create(dir.resolve("counted.pm"), BackendFixture.SIZE,
                MappedRegion.MapMode.FILE));
    }

    @Test
    void shouldNotPersistAFlushedBatchAgain() {
        PersistCountingRegion region = countingRegion();
        try (BackendNode node = start(region); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long at = grantSlab(c)[1] + 1024;
            byte[] data = bytes(1000, 7);
            byte[] record = batch().write(at, data).commit(1).seal(0, 0);
            long redoBefore = region.persistedBytes(Kind.REDO);
            node.betweenBatches(() -> {
                writeRedo(c, 0, 0, record);
                c.flush(0, false).await(); // the frontend's FLUSH after its WRITE, before the replayer sees it
            });
            node.awaitReplayed();
            assertEquals(1, checkpoint(c, 0).appliedTxId());
            assertArrayEquals(data, heap(c, at, data.length));
            assertEquals(record.length, region.persistedBytes(Kind.REDO) - redoBefore,
                    "the batch is persisted once, by the FLUSH");
        }
    }

    @Test
    void shouldPersistABatchNoFlushCovered() {
        PersistCountingRegion region = countingRegion();
        try (BackendNode node = start(region); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long at = grantSlab(c)[1] + 1024;
            byte[] record = batch().write(at, bytes(300, 8)).commit(1).seal(0, 0);
            long redoBefore = region.persistedBytes(Kind.REDO);
            writeRedo(c, 0, 0, record); // never flushed (an ASYNC commit's batch, a crashed frontend's last one)
            node.awaitReplayed();
            assertEquals(1, checkpoint(c, 0).appliedTxId());
            long redo = region.persistedBytes(Kind.REDO) - redoBefore;
            assertTrue(redo > record.length - LogRecordLayout.ALIGNMENT && redo <= record.length,
                    "the replayer persists the batch no FLUSH did: " + redo + " bytes of " + record.length);
        }
    }

    /**
     * The usual order on a busy backend: the replayer sees the batch the moment the WRITE lands and persists it
     * before the frontend's FLUSH arrives; that FLUSH finds the batch durable and does not persist it again, while
     * a write the replayer did not persist is persisted by the same FLUSH.
     */
    @Test
    void shouldNotPersistAgainInTheFlushABatchTheReplayerPersisted() {
        PersistCountingRegion region = countingRegion();
        try (BackendNode node = start(region); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long at = grantSlab(c)[1] + 1024;
            byte[] data = bytes(700, 9);
            byte[] record = batch().write(at, data).commit(1).seal(0, 0);
            long redoBefore = region.persistedBytes(Kind.REDO);
            writeRedo(c, 0, 0, record);
            node.awaitReplayed(); // persisted by the replayer: no FLUSH yet
            assertEquals(1, checkpoint(c, 0).appliedTxId());
            assertEquals(record.length, region.persistedBytes(Kind.REDO) - redoBefore, "the replayer persisted it");
            c.flush(0, false).await();
            assertEquals(record.length, region.persistedBytes(Kind.REDO) - redoBefore,
                    "the FLUSH found the batch durable: persisted once");
            assertEquals(0, node.frontendLog(0).redoWrites().size(), "released and flushed: forgotten");

            byte[] next = batch().write(at, bytes(100, 10)).commit(2).seal(record.length, 0);
            node.betweenBatches(() -> {
                writeRedo(c, 0, record.length, next);
                c.flush(0, false).await(); // before the replayer: this FLUSH persists it
            });
            assertEquals(record.length + next.length, region.persistedBytes(Kind.REDO) - redoBefore);
            node.awaitReplayed();
            assertEquals(2, checkpoint(c, 0).appliedTxId());
            assertEquals(record.length + next.length, region.persistedBytes(Kind.REDO) - redoBefore,
                    "each batch persisted once, by whoever came first");
        }
    }

    @Test
    void shouldPersistTouchedHeapLinesNotPages() {
        PersistCountingRegion region = countingRegion();
        try (BackendNode node = start(region); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long slab = grantSlab(c)[1];
            long heapBefore = region.persistedBytes(Kind.HEAP);
            // 8 bytes at line offset 3000 (page offset > 64), 10 bytes straddling a line boundary, 1 KiB aligned
            byte[] record = batch().write(slab + 3000, bytes(8, 1)).write(slab + 8192 + 60, bytes(10, 2))
                    .write(slab + 16384, bytes(1024, 3)).commit(1).seal(0, 0);
            writeRedo(c, 0, 0, record);
            node.awaitReplayed();
            assertEquals(1, checkpoint(c, 0).appliedTxId());
            assertEquals(64 + 128 + 1024, region.persistedBytes(Kind.HEAP) - heapBefore,
                    "whole 64-byte lines around each write, no page widening");
        }
    }

    @Test
    void shouldPersistSemanticRecordsOncePerFlush() {
        PersistCountingRegion region = countingRegion();
        try (BackendNode node = start(region); FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            long position = 0;
            long before = region.persistedBytes(Kind.SEMANTIC);
            for (int i = 1; i <= 3; i++) {
                byte[] r = SemanticRecordLayout.encode(position, i, 0xFEED, bytes(100, i), 100);
                c.write(RegionIds.semantic(0), position, r, 0, r.length).await();
                position += r.length;
            }
            c.flush(position, true).await();
            assertEquals(position, region.persistedBytes(Kind.SEMANTIC) - before,
                    "records persisted by the FLUSH, not again by the watermark check");
        }
        try (BackendNode node = start(countingRegion())) {
            assertEquals(3, node.frontendLog(0).scanSemantic().records());
        }
    }

    /**
     * A batch the FLUSH persisted is applied without a second persist; power is cut at every later persist point
     * (the heap's, the checkpoint's) with several crash images each: after a restart the batch is applied whole.
     */
    @Test
    void shouldLoseNothingWhenPowerFailsAfterAFlushedBatchWasSkipped() {
        SimulatedPmRegion setup = new SimulatedPmRegion("persist once", (int) BackendFixture.SIZE);
        long at;
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("sim.pm")).conclude(), setup);
             FabricConnection c = node.localFabric().connect()) {
            attach(c, 0);
            at = grantSlab(c)[1] + 512;
        }
        byte[] before = setup.durableImage();
        byte[] data = bytes(2000, 11);
        byte[] other = bytes(100, 12);
        Random random = new Random(7);
        int points = 0;
        for (int k = 0; k < 40; k++) {
            SimulatedPmRegion region = new SimulatedPmRegion("power cut at persist " + k, before.clone());
            boolean completed = false;
            try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("sim.pm")).conclude(),
                    region); FabricConnection c = node.localFabric().connect()) {
                attach(c, 0);
                byte[] record = batch().write(at, data).write(at + 4096, other).commit(1).seal(0, 0);
                int cut = k;
                node.betweenBatches(() -> {
                    writeRedo(c, 0, 0, record);
                    c.flush(0, false).await(); // acknowledged: the batch is durable
                    region.failAtPersist(region.persistCount() + cut); // before the replayer may run
                });
                try {
                    node.awaitReplayed();
                    completed = !region.powerLost() && checkpoint(c, 0).appliedTxId() == 1;
                } catch (RuntimeException | Error e) {
                    assertTrue(SimulatedPowerFailure.findIn(e) != null, "only the power cut fails: " + e);
                }
            } catch (RuntimeException | Error closing) {
                assertTrue(SimulatedPowerFailure.findIn(closing) != null, "only the power cut fails: " + closing);
            }
            if (completed) {
                break;
            }
            points++;
            for (int i = 0; i < 6; i++) {
                SimulatedPmRegion after = new SimulatedPmRegion("after the cut", region.crashImage(random));
                try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("sim.pm")).conclude(),
                        after); FabricConnection c = node.localFabric().connect()) {
                    node.awaitReplayed();
                    attach(c, 0);
                    String when = "power cut at persist " + k + " after the FLUSH, image " + i;
                    assertEquals(1, checkpoint(c, 0).appliedTxId(), when);
                    assertArrayEquals(data, heap(c, at, data.length), when);
                    assertArrayEquals(other, heap(c, at + 4096, other.length), when);
                }
            }
        }
        assertTrue(points >= 2, "persist points after the FLUSH explored: " + points);
        System.out.println("flushed batch replayed without a second persist: " + points
                + " power-cut points x 6 crash images, nothing lost");
    }
}
