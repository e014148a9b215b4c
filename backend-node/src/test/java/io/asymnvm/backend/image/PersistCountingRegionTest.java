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

    private static Map<Kind, Long> snapshot(PersistCountingRegion region) {
        Map<Kind, Long> m = new EnumMap<>(Kind.class);
        for (Kind k : Kind.values()) {
            m.put(k, region.persistedBytes(k));
        }
        return m;
    }
}
