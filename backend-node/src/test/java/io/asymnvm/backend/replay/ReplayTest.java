package io.asymnvm.backend.replay;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.batch;
import static io.asymnvm.backend.BackendFixture.bytes;
import static io.asymnvm.backend.BackendFixture.checkpoint;
import static io.asymnvm.backend.BackendFixture.failsWith;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static io.asymnvm.backend.BackendFixture.heap;
import static io.asymnvm.backend.BackendFixture.writeRedo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The backend's replayer, fed with redo batches built the way the frontend's redo buffer builds them and written
 * to the redo ring through the local fabric (or straight into the file while the node is down).
 */
@Timeout(60)
class ReplayTest {
    @TempDir
    Path dir;

    private BackendNode node;
    private final List<FabricConnection> connections = new ArrayList<>();

    private Path pm() {
        return dir.resolve("replay.pm");
    }

    private BackendNode startNode() {
        node = BackendFixture.start(pm());
        return node;
    }

    private void stopNode() {
        connections.forEach(FabricConnection::close);
        connections.clear();
        node.close();
        node = null;
    }

    @AfterEach
    void tearDown() {
        if (node != null) {
            stopNode();
        }
    }

    private FabricConnection connect(int frontendId) {
        FabricConnection c = node.localFabric().connect();
        connections.add(c);
        attach(c, frontendId);
        return c;
    }

    private static long slabData(long[] slab) {
        return slab[1] + 1024;
    }

    @Test
    void shouldApplyABatchAndAdvanceTheCheckpointToItsLastTransaction() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] a = bytes(100, 1);
        byte[] b = bytes(8, 2);
        byte[] record = batch().write(at, a).commit(1).write(at + 4096, b).write(at + 50, bytes(10, 3)).commit(2)
                .seal(0, 0);
        writeRedo(c, 0, 0, record);
        node.awaitReplayed();

        byte[] expected = a.clone();
        System.arraycopy(bytes(10, 3), 0, expected, 50, 10);
        assertArrayEquals(expected, heap(c, at, 100), "later write of the batch wins");
        assertArrayEquals(b, heap(c, at + 4096, 8));
        Checkpoint cp = checkpoint(c, 0);
        assertEquals(2, cp.appliedTxId());
        assertEquals(record.length, cp.redoHead());
        assertEquals(1, cp.seq());
        assertEquals(cp, node.frontendLog(0).checkpoint());
    }

    @Test
    void shouldApplyConsecutiveBatchesInRingOrderAcrossTheWrap() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        long seed = 0x5EED_0003L;
        Random rnd = new Random(seed);
        byte[] model = new byte[8192];
        long position = 0;
        long tx = 0;
        long lastSemanticEnd = 0;
        while (position < 2 * BackendFixture.RING + 4096) {
            BackendFixture.Batch batch = batch();
            int txs = 1 + rnd.nextInt(4);
            for (int t = 0; t < txs; t++) {
                for (int w = rnd.nextInt(3); w >= 0; w--) {
                    int off = rnd.nextInt(model.length - 600);
                    byte[] data = new byte[1 + rnd.nextInt(500)];
                    rnd.nextBytes(data);
                    System.arraycopy(data, 0, model, off, data.length);
                    batch.write(at + off, data);
                }
                batch.commit(++tx);
            }
            lastSemanticEnd = tx * 64;
            byte[] probe = batch.seal(position, lastSemanticEnd);
            long inRing = Math.floorMod(position, BackendFixture.RING);
            long needed = inRing + probe.length > BackendFixture.RING ? BackendFixture.RING - inRing + probe.length
                    : probe.length;
            if (position + needed - checkpoint(c, 0).redoHead() > BackendFixture.RING) {
                node.awaitReplayed(); // like a frontend, never overwrite a batch the replayer has not applied
            }
            if (inRing + probe.length > BackendFixture.RING) {
                byte[] pad = LogRecordLayout.padding(position, (int) (BackendFixture.RING - inRing));
                writeRedo(c, 0, inRing, pad);
                position += BackendFixture.RING - inRing;
                inRing = 0;
            }
            byte[] record = batch.seal(position, lastSemanticEnd);
            writeRedo(c, 0, inRing, record);
            position += record.length;
            if (rnd.nextInt(4) == 0) {
                node.awaitReplayed();
                assertEquals(tx, checkpoint(c, 0).appliedTxId(), "seed " + seed);
            }
        }
        node.awaitReplayed();
        Checkpoint cp = checkpoint(c, 0);
        assertEquals(tx, cp.appliedTxId(), "seed " + seed);
        assertEquals(position, cp.redoHead(), "seed " + seed);
        assertEquals(lastSemanticEnd, cp.semHead(), "seed " + seed);
        assertArrayEquals(model, heap(c, at, model.length), "seed " + seed);
        AttachReply r = attach(node.localFabric().connect(), 0);
        assertEquals(tx, r.appliedTxId());
        assertEquals(position, r.redoHead());
        assertEquals(position, r.redoValidTail());
    }

    @Test
    void shouldStopReplayOfAFrontendWritingOutsideItsSlabsButNotOfOthers() {
        startNode();
        FabricConnection zero = connect(0);
        FabricConnection one = connect(1);
        long mine = slabData(grantSlab(zero));
        long theirs = slabData(grantSlab(one));
        byte[] before = heap(one, theirs, 64);

        writeRedo(zero, 0, 0, batch().write(mine, bytes(16, 1)).commit(1).seal(0, 0));
        node.awaitReplayed();
        writeRedo(zero, 0, 64 * 2, batch().write(theirs, bytes(64, 2)).commit(2).seal(64 * 2, 0));
        node.awaitReplayed();
        assertArrayEquals(before, heap(one, theirs, 64), "nothing of the violating batch is applied");
        assertEquals(1, checkpoint(zero, 0).appliedTxId());
        assertTrue(node.frontendLog(0).fault().contains("outside the slabs granted to frontend 0"),
                node.frontendLog(0).fault());

        byte[] data = bytes(64, 3);
        writeRedo(one, 1, 0, batch().write(theirs + 64, data).commit(1).seal(0, 0));
        node.awaitReplayed();
        assertArrayEquals(data, heap(one, theirs + 64, 64), "frontend 1 still replays");
        assertEquals(1, checkpoint(one, 1).appliedTxId());

        FabricConnection again = node.localFabric().connect();
        connections.add(again);
        AsymNvmException e = failsWith(ErrorCode.RECOVERY_REQUIRED,
                again.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 0, 0)));
        assertTrue(e.getMessage().contains("frontend 0"), e.getMessage());
        assertTrue(e.getMessage().contains("outside the slabs granted"), e.getMessage());
        assertTrue(e.getMessage().contains("[" + theirs + ", " + (theirs + 64) + ")"), e.getMessage());
    }

    @Test
    void shouldLeaveARefusedAttachWithoutAccess() {
        startNode();
        FabricConnection zero = connect(0);
        long theirs = slabData(grantSlab(connect(1)));
        writeRedo(zero, 0, 0, batch().write(theirs, bytes(8, 1)).commit(1).seal(0, 0));
        FabricConnection again = node.localFabric().connect();
        connections.add(again);
        failsWith(ErrorCode.RECOVERY_REQUIRED,
                again.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 0, 0)));
        AsymNvmException e = org.junit.jupiter.api.Assertions.assertThrows(AsymNvmException.class,
                () -> again.write(RegionIds.redo(0), 0, new byte[64], 0, 64).await());
        assertTrue(e.errorCode() == ErrorCode.NOT_ATTACHED || e.errorCode() == ErrorCode.ACCESS_DENIED,
                e.getMessage());
        AsymNvmException read = org.junit.jupiter.api.Assertions.assertThrows(AsymNvmException.class,
                () -> again.read(RegionIds.HEAP, 0, 8).await());
        assertTrue(read.errorCode() == ErrorCode.NOT_ATTACHED || read.errorCode() == ErrorCode.ACCESS_DENIED,
                read.getMessage());
    }

    @Test
    void shouldStopReplayOfABatchThatSkipsTransactions() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        writeRedo(c, 0, 0, batch().write(at, bytes(8, 1)).commit(5).seal(0, 0));
        node.awaitReplayed();
        assertEquals(0, checkpoint(c, 0).appliedTxId());
        String fault = node.frontendLog(0).fault();
        assertTrue(fault != null && fault.contains("5..5") && fault.contains("next to apply is 1"), fault);
    }

    @Test
    void shouldStopReplayOfAStructurallyBrokenBatchForThatFrontendOnly() {
        startNode();
        FabricConnection zero = connect(0);
        FabricConnection one = connect(1);
        long mine = slabData(grantSlab(zero));
        long theirs = slabData(grantSlab(one));
        byte[] unknownEntry = new byte[16];
        unknownEntry[0] = 9;
        writeRedo(zero, 0, 0, batch().write(mine, bytes(8, 1)).raw(unknownEntry).commit(1).seal(0, 0));
        byte[] data = bytes(32, 2);
        writeRedo(one, 1, 0, batch().write(theirs, data).commit(1).seal(0, 0));
        node.awaitReplayed();
        assertArrayEquals(data, heap(one, theirs, 32), "frontend 1 replays despite frontend 0's broken batch");
        assertEquals(0, checkpoint(zero, 0).appliedTxId());
        String fault = node.frontendLog(0).fault();
        assertTrue(fault != null && fault.contains("unknown redo entry kind 9"), fault);
        assertArrayEquals(new byte[8], heap(zero, mine, 8), "nothing of the broken batch applied");
    }

    @Test
    void shouldFaultAWriteAtAnOverflowingHeapAddressForThatFrontendOnly() {
        startNode();
        FabricConnection zero = connect(0);
        FabricConnection one = connect(1);
        grantSlab(zero);
        long theirs = slabData(grantSlab(one));
        writeRedo(zero, 0, 0, batch().write(Long.MAX_VALUE - 10, bytes(64, 1)).commit(1).seal(0, 0));
        byte[] data = bytes(16, 2);
        writeRedo(one, 1, 0, batch().write(theirs, data).commit(1).seal(0, 0));
        node.awaitReplayed();
        assertArrayEquals(data, heap(one, theirs, 16), "frontend 1 replays despite frontend 0's garbage address");
        String fault = node.frontendLog(0).fault();
        assertTrue(fault != null && fault.contains("outside the slabs granted to frontend 0"), fault);
    }

    @Test
    void shouldNotApplyATornBatchNorAdvanceTheCheckpoint() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] data = bytes(200, 7);
        byte[] record = batch().write(at, data).commit(1).seal(0, 0);
        byte[] torn = record.clone();
        torn[100] ^= 0x40;
        writeRedo(c, 0, 0, torn);
        node.awaitReplayed();
        assertArrayEquals(new byte[200], heap(c, at, 200));
        assertEquals(Checkpoint.INITIAL, checkpoint(c, 0));
        assertNull(node.frontendLog(0).fault(), "a torn batch is not a fault: it may still be completed");

        writeRedo(c, 0, 0, record);
        node.awaitReplayed();
        assertArrayEquals(data, heap(c, at, 200), "the completed batch is applied");
        assertEquals(1, checkpoint(c, 0).appliedTxId());
    }

    @Test
    void shouldNeitherStallNorBreakReplayOnACrcValidRedoRecordShorterThanABatchHeader() {
        startNode();
        FabricConnection zero = connect(0);
        FabricConnection one = connect(1);
        slabData(grantSlab(zero));
        long theirs = slabData(grantSlab(one));
        // a sealed redo-typed record of 24 bytes: the ring fuzzer's crash-72496682 (batch fields read past its end)
        byte[] stub = new byte[LogRecordLayout.ALIGNMENT];
        io.asymnvm.core.layout.LogRecordLayout.putHeader(LogRecordLayout.wrap(stub),
                LogRecordLayout.COMMON_HEADER_LENGTH, LogRecordLayout.TYPE_REDO_BATCH, 0);
        LogRecordLayout.seal(stub);
        writeRedo(zero, 0, 0, stub);
        byte[] data = bytes(64, 5);
        writeRedo(one, 1, 0, batch().write(theirs, data).commit(1).seal(0, 0));
        node.awaitReplayed();
        assertArrayEquals(data, heap(one, theirs, 64), "frontend 1 replays");
        assertEquals(0, checkpoint(zero, 0).appliedTxId(), "the stub is a torn tail, not a batch");
        stopNode();
        startNode(); // replays at start: must not fail on the stub
        assertEquals(1, checkpoint(connect(1), 1).appliedTxId());
    }

    @Test
    void shouldReplayABatchWrittenBeforeAnUncleanStopOnRestart() throws IOException {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        Superblock sb = node.superblock();
        stopNode();

        byte[] data = bytes(300, 11);
        byte[] record = batch().write(at, data).commit(1).write(at + 300, data).commit(2).seal(0, 0);
        BackendFixture.patchFile(pm(), sb.redoRingOf(0), record);
        Files.writeString(BackendFixture.markFile(pm()), "running pid 1\n");

        startNode();
        assertFalse(node.previousShutdownClean());
        FabricConnection after = connect(0);
        assertArrayEquals(data, heap(after, at, 300), "replayed during start, before serving");
        assertArrayEquals(data, heap(after, at + 300, 300));
        assertEquals(2, checkpoint(after, 0).appliedTxId());
    }

    @Test
    void shouldReplayAgainAfterACrashBetweenApplyAndCheckpoint() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] data = bytes(64, 5);
        writeRedo(c, 0, 0, batch().write(at, data).commit(1).seal(0, 0));
        node.awaitReplayed();
        Superblock sb = node.superblock();
        stopNode();

        BackendFixture.patchFile(pm(), sb.controlBlockOf(0), new byte[2 * ControlBlockLayout.SLOT_LENGTH]);
        BackendFixture.patchFile(pm(), sb.heapOffset() + at, new byte[64]);

        startNode();
        FabricConnection after = connect(0);
        assertArrayEquals(data, heap(after, at, 64), "replay is idempotent");
        assertEquals(1, checkpoint(after, 0).appliedTxId());
    }

    @Test
    void shouldFallBackToTheOtherCheckpointSlotWhenTheNewestIsTorn() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] one = bytes(64, 1);
        byte[] two = bytes(64, 2);
        byte[] first = batch().write(at, one).commit(1).seal(0, 0);
        writeRedo(c, 0, 0, first);
        node.awaitReplayed();
        writeRedo(c, 0, first.length, batch().write(at + 64, two).commit(2).seal(first.length, 0));
        node.awaitReplayed();
        Checkpoint newest = checkpoint(c, 0);
        assertEquals(2, newest.seq());
        assertEquals(2, newest.appliedTxId());
        Superblock sb = node.superblock();
        stopNode();

        long newestSlot = sb.controlBlockOf(0) + ControlBlockLayout.SLOT0_OFFSET;
        BackendFixture.flipByte(pm(), newestSlot + ControlBlockLayout.SLOT_APPLIED_OFFSET);
        BackendFixture.patchFile(pm(), sb.heapOffset() + at + 64, new byte[64]);

        Checkpoint survivor = ControlBlockLayout.newestCheckpoint(
                BackendFixture.readFile(pm(), sb.controlBlockOf(0), ControlBlockLayout.READ_LENGTH));
        assertEquals(1, survivor.seq(), "the torn newest slot is ignored");
        assertEquals(1, survivor.appliedTxId());
        assertEquals(first.length, survivor.redoHead());

        startNode();
        FabricConnection after = connect(0);
        assertArrayEquals(one, heap(after, at, 64));
        assertArrayEquals(two, heap(after, at + 64, 64), "batch 2 replayed again from the older checkpoint");
        Checkpoint cp = checkpoint(after, 0);
        assertEquals(2, cp.appliedTxId());
        assertEquals(2, cp.seq(), "the re-replay rewrote the torn slot");
    }

    @Test
    void shouldStartFromNothingWhenBothCheckpointSlotsAreTorn() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] first = batch().write(at, bytes(8, 1)).commit(1).seal(0, 0);
        writeRedo(c, 0, 0, first);
        byte[] second = batch().write(at + 8, bytes(8, 2)).commit(2).seal(first.length, 0);
        writeRedo(c, 0, first.length, second);
        node.awaitReplayed();
        Superblock sb = node.superblock();
        stopNode();

        BackendFixture.flipByte(pm(), sb.controlBlockOf(0) + ControlBlockLayout.SLOT0_OFFSET + 1);
        BackendFixture.flipByte(pm(), sb.controlBlockOf(0) + ControlBlockLayout.SLOT1_OFFSET + 1);
        startNode();
        FabricConnection after = connect(0);
        assertEquals(2, checkpoint(after, 0).appliedTxId(), "both batches replayed again from position 0");
        assertArrayEquals(bytes(8, 2), heap(after, at + 8, 8));
    }

    @Test
    void shouldSkipAReplayedCopyOfAnAlreadyAppliedBatch() {
        startNode();
        FabricConnection c = connect(0);
        long at = slabData(grantSlab(c));
        byte[] first = batch().write(at, bytes(8, 1)).commit(1).seal(0, 0);
        writeRedo(c, 0, 0, first);
        node.awaitReplayed();
        byte[] copy = batch().write(at, bytes(8, 9)).commit(1).seal(first.length, 0);
        writeRedo(c, 0, first.length, copy);
        byte[] next = batch().write(at + 8, bytes(8, 2)).commit(2).seal(first.length + copy.length, 0);
        writeRedo(c, 0, first.length + copy.length, next);
        node.awaitReplayed();
        assertArrayEquals(bytes(8, 1), heap(c, at, 8), "the stale copy is not applied");
        assertArrayEquals(bytes(8, 2), heap(c, at + 8, 8));
        assertEquals(2, checkpoint(c, 0).appliedTxId());
        assertNull(node.frontendLog(0).fault());
    }

    @Test
    void shouldReportReplayProgressOnAttach() {
        startNode();
        FabricConnection c = connect(1);
        long at = slabData(grantSlab(c));
        byte[] record = batch().write(at, bytes(8, 1)).commit(1).commit(2).seal(0, 128);
        writeRedo(c, 1, 0, record);
        node.awaitReplayed();
        FabricConnection again = node.localFabric().connect();
        connections.add(again);
        AttachReply r = attach(again, 1);
        assertEquals(2, r.appliedTxId());
        assertEquals(record.length, r.redoHead());
        assertEquals(128, r.semHead());
        failsWith(ErrorCode.STALE_EPOCH, c.read(RegionIds.HEAP, 0, 8));
    }
}
