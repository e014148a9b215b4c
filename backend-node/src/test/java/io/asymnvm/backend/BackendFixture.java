package io.asymnvm.backend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.testsupport.PmFiles;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Small backend images for tests (1 MiB: two frontends with 64 KiB rings, eleven 64 KiB slabs), control calls,
 * redo batches built the way the frontend's redo buffer builds them, and offline patching of a PM file.
 */
public final class BackendFixture {
    public static final long SIZE = 1L << 20;
    public static final int PAGE = 4096;
    public static final long SLAB = 64L << 10;
    public static final long RING = 64L << 10;
    public static final int FRONTENDS = 2;
    /** Slabs in a {@link #SIZE} image with this geometry. */
    public static final long SLABS = 11;

    private BackendFixture() {
    }

    /** The small geometry, no TCP listener. */
    public static BackendConfiguration.Builder config(Path pm) {
        return BackendConfiguration.builder(pm).size(SIZE).pageSize(PAGE).slabSize(SLAB).maxFrontends(FRONTENDS)
                .semRingCapacity(RING).redoRingCapacity(RING).port(-1);
    }

    public static BackendNode start(Path pm) {
        return BackendNode.start(config(pm).conclude());
    }

    public static Path markFile(Path pm) {
        return pm.resolveSibling(pm.getFileName() + ".mark");
    }

    public static Path lockFile(Path pm) {
        return pm.resolveSibling(pm.getFileName() + ".lock");
    }

    public static AttachReply attach(FabricConnection c, int frontendId) {
        return AttachReply.decode(c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, frontendId, 0))
                .await().bytes());
    }

    /** Attaches over a connection from another process, answering the node's challenge with its credential. */
    public static AttachReply attach(BackendNode node, FabricConnection c, int frontendId) {
        byte[] secret = io.asymnvm.core.auth.FrontendCredentials.load(node.credentialsFile()).secret(frontendId);
        return AttachReply.decode(c.call(io.asymnvm.core.auth.AttachProof.attachRequest(c, secret, frontendId, 0,
                null)).await().bytes());
    }

    /** Grants a slab; returns {slab index, heap offset}. */
    public static long[] grantSlab(FabricConnection c) {
        ByteBuffer b = ControlMessageLayout.wrap(c.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_GRANT_SLAB, 0, 0)).await().bytes());
        return new long[] {b.getLong(), b.getLong()};
    }

    /** Awaits a completion that must fail with {@code code}; returns the failure. */
    public static AsymNvmException failsWith(ErrorCode code, Completion c) {
        AsymNvmException e = assertThrows(AsymNvmException.class, c::await);
        assertEquals(code, e.errorCode(), e.getMessage());
        return e;
    }

    public static Checkpoint checkpoint(FabricConnection c, int frontendId) {
        return ControlBlockLayout.newestCheckpoint(controlBlock(c, frontendId));
    }

    public static byte[] controlBlock(FabricConnection c, int frontendId) {
        return c.read(RegionIds.control(frontendId), 0, ControlBlockLayout.READ_LENGTH).await().bytes();
    }

    public static byte[] heap(FabricConnection c, long heapOffset, int length) {
        return c.read(RegionIds.HEAP, heapOffset, length).await().bytes();
    }

    public static void writeRedo(FabricConnection c, int frontendId, long position, byte[] batch) {
        c.write(RegionIds.redo(frontendId), position, batch, 0, batch.length).await();
    }

    /** Builds sealed redo batches: transactions of writes, each closed by a commit entry. */
    public static final class Batch {
        private final ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN)
                .position(RedoBatchLayout.HEADER_LENGTH);
        private final List<Long> txIds = new ArrayList<>();

        public Batch write(long heapOffset, byte[] data) {
            RedoBatchLayout.putWriteEntry(buffer, heapOffset, data, 0, data.length);
            return this;
        }

        public Batch commit(long txId) {
            RedoBatchLayout.putCommitEntry(buffer, txId);
            txIds.add(txId);
            return this;
        }

        /** Raw entry bytes (for structurally broken batches). */
        public Batch raw(byte[] bytes) {
            buffer.put(bytes);
            return this;
        }

        public byte[] seal(long position, long semanticEnd) {
            int length = buffer.position();
            byte[] record = new byte[LogRecordLayout.alignedLength(length)];
            System.arraycopy(buffer.array(), 0, record, 0, length);
            RedoBatchLayout.finish(record, length, position, txIds.get(0), txIds.get(txIds.size() - 1), semanticEnd,
                    txIds.size());
            return record;
        }
    }

    public static Batch batch() {
        return new Batch();
    }

    public static byte[] bytes(int length, int seed) {
        byte[] b = new byte[length];
        new java.util.Random(seed).nextBytes(b);
        return b;
    }

    // PM file reading and patching: one implementation in test-support (PmFiles), the names kept for this module

    public static byte[] readFile(Path file, long offset, int length) {
        return PmFiles.read(file, offset, length);
    }

    public static void patchFile(Path file, long offset, byte[] bytes) {
        PmFiles.patch(file, offset, bytes);
    }

    public static void patchInt(Path file, long offset, int value) {
        PmFiles.patchInt(file, offset, value);
    }

    public static int readInt(Path file, long offset) {
        return PmFiles.readInt(file, offset);
    }

    /** XORs one byte of the file; returns the original value. */
    public static byte flipByte(Path file, long offset) {
        return PmFiles.flipByte(file, offset);
    }
}
