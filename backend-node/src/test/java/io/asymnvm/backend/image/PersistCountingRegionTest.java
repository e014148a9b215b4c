package io.asymnvm.backend.image;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Persisted bytes counted by area, on a node serving a counting region. */
@Timeout(60)
class PersistCountingRegionTest {
    @TempDir
    Path dir;

    @Test
    void shouldAttributeOffsetsToTheAreasOfTheSuperblock() {
        PersistCountingRegion region = new PersistCountingRegion(new ByteArrayRegion("pm", (int) BackendFixture.SIZE));
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("c.pm")).conclude(), region)) {
            Superblock sb = node.superblock();
            assertEquals(Kind.OTHER, region.kindOf(sb.heapOffset()), "unclassified: everything is other");
            region.classify(sb);
            assertEquals(Kind.OTHER, region.kindOf(0));
            assertEquals(Kind.OTHER, region.kindOf(sb.controlBlockOf(1)));
            assertEquals(Kind.SEMANTIC, region.kindOf(sb.semRingOf(1)));
            assertEquals(Kind.SEMANTIC, region.kindOf(sb.redoRingOf(1) - 1));
            assertEquals(Kind.REDO, region.kindOf(sb.redoRingOf(1)));
            assertEquals(Kind.REDO, region.kindOf(sb.logAreaOf(1) + sb.logAreaStride() - 1));
            assertEquals(Kind.HEAP, region.kindOf(sb.heapOffset()));
            assertEquals(Kind.HEAP, region.kindOf(sb.slabOffset(sb.slabCount()) - 1));
            assertEquals(Kind.OTHER, region.kindOf(sb.slabOffset(sb.slabCount())));
        }
    }

    @Test
    void shouldCountTheRedoBatchAndTheHeapBytesItsReplayPersists() {
        PersistCountingRegion region = new PersistCountingRegion(new ByteArrayRegion("pm", (int) BackendFixture.SIZE));
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("r.pm")).conclude(), region);
             FabricConnection c = node.localFabric().connect()) {
            region.classify(node.superblock());
            attach(c, 0);
            long at = grantSlab(c)[1] + 1024;
            Map<Kind, Long> before = snapshot(region);
            long redoWritten = region.writtenBytes(Kind.REDO);
            long heapWritten = region.writtenBytes(Kind.HEAP);

            byte[] record = batch().write(at, bytes(100, 1)).commit(1).seal(0, 0);
            node.betweenBatches(() -> { // the WRITE and its FLUSH before the replayer looks
                writeRedo(c, 0, 0, record);
                c.flush(0, false).await();
            });
            node.awaitReplayed();

            Map<Kind, Long> after = snapshot(region);
            // the FLUSH persists the WRITE (aligned); the replayer, finding it persisted, does not persist it again
            long redo = after.get(Kind.REDO) - before.get(Kind.REDO);
            assertEquals(record.length, redo, "redo bytes persisted for a batch of " + record.length);
            long heap = after.get(Kind.HEAP) - before.get(Kind.HEAP);
            assertEquals(128, heap, "heap bytes persisted: the two 64-byte lines the 100 bytes at line start touch");
            assertEquals(0L, after.get(Kind.SEMANTIC) - before.get(Kind.SEMANTIC));
            assertTrue(after.get(Kind.OTHER) > before.get(Kind.OTHER), "the checkpoint is persisted");
            assertTrue(region.persistCalls(Kind.HEAP) > 0);
            assertEquals(record.length, region.writtenBytes(Kind.REDO) - redoWritten, "the WRITE of the batch");
            assertEquals(100, region.writtenBytes(Kind.HEAP) - heapWritten, "the replayer's store of the write");
        }
    }

    @Test
    void shouldWriteBackTheScatteredHeapRangesOfABatchInOneCall() {
        PersistCountingRegion region = new PersistCountingRegion(new ByteArrayRegion("pm", (int) BackendFixture.SIZE));
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("s.pm")).conclude(), region);
             FabricConnection c = node.localFabric().connect()) {
            region.classify(node.superblock());
            attach(c, 0);
            long at = grantSlab(c)[1];

            byte[] one = batch().write(at + 1024, bytes(100, 1)).commit(1).seal(0, 0);
            long[] before = syncsBesideRedo(region);
            writeRedo(c, 0, 0, one);
            c.flush(0, false).await();
            node.awaitReplayed();
            long[] afterOne = syncsBesideRedo(region);
            assertEquals(1, afterOne[1] - before[1], "one heap range");

            // three ranges lines apart, in one transaction: three heap ranges, written back by one call
            byte[] three = batch().write(at + 8192, bytes(100, 2)).write(at + 4096, bytes(8, 3))
                    .write(at + 20_000, bytes(300, 4)).commit(2).seal(one.length, 0);
            writeRedo(c, 0, one.length, three);
            c.flush(0, false).await();
            node.awaitReplayed();
            long[] afterThree = syncsBesideRedo(region);
            assertEquals(3, afterThree[1] - afterOne[1], "three heap ranges, counted one by one");
            assertEquals(afterOne[0] - before[0], afterThree[0] - afterOne[0],
                    "a batch of three scattered ranges costs the write-back calls of a batch of one");
        }
    }

    /**
     * {write-back calls other than the redo ring's, heap persist calls}. A redo batch is persisted by the FLUSH or
     * the replayer, whichever comes first, and now and then by both at once: its calls are left out.
     */
    private static long[] syncsBesideRedo(PersistCountingRegion region) {
        return new long[] {region.syncs() - region.persistCalls(Kind.REDO), region.persistCalls(Kind.HEAP)};
    }

    private static Map<Kind, Long> snapshot(PersistCountingRegion region) {
        Map<Kind, Long> m = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            m.put(k, region.persistedBytes(k));
        }
        return m;
    }
}
