package io.asymnvm.backend.replay;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PersistCountingRegion;
import io.asymnvm.backend.image.PersistCountingRegion.Kind;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.checkpoint;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.heap;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The replayer persists the heap lines a batch touched, not the pages around them (issue 8 goal 7): small writes
 * deep inside a page cost their 64-byte lines, a write straddling a line boundary both lines, writes sharing a line
 * that line once.
 */
@Timeout(60)
class PersistTouchedLinesTest {
    @TempDir
    Path dir;

    @Test
    void shouldPersistTouchedHeapLinesNotPages() {
        PersistCountingRegion region = new PersistCountingRegion(new ByteArrayRegion("pm", (int) BackendFixture.SIZE));
        try (BackendNode node = BackendNode.start(BackendFixture.config(dir.resolve("l.pm")).conclude(), region);
             FabricConnection c = node.localFabric().connect()) {
            region.classify(node.superblock());
            attach(c, 0);
            long slab = grantSlab(c)[1];
            long heapBefore = region.persistedBytes(Kind.HEAP);
            // 8 bytes deep in a page; 10 bytes across a line boundary; 1 KiB at a line start; two writes in one line
            byte[] record = batch().write(slab + 3000, bytes(8, 1)).write(slab + 8192 + 60, bytes(10, 2))
                    .write(slab + 16384, bytes(1024, 3)).write(slab + 20480 + 4, bytes(4, 4))
                    .write(slab + 20480 + 40, bytes(4, 5)).commit(1).seal(0, 0);
            writeRedo(c, 0, 0, record);
            node.awaitReplayed();
            assertEquals(1, checkpoint(c, 0).appliedTxId());
            assertEquals(64 + 128 + 1024 + 64, region.persistedBytes(Kind.HEAP) - heapBefore,
                    "whole 64-byte lines around each write, each line once, no page widening");
            assertArrayEquals(bytes(1024, 3), heap(c, slab + 16384, 1024));
        }
    }
}
