package io.asymnvm.backend.control;

import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.failsWith;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The backend's control plane and the access rules it installs, exercised through the local fabric. */
@Timeout(60)
class ControlPlaneTest {
    @TempDir
    Path dir;

    private BackendNode node;
    private final List<FabricConnection> connections = new ArrayList<>();

    @BeforeEach
    void setUp() {
        node = BackendFixture.start(dir.resolve("cp.pm"));
    }

    @AfterEach
    void tearDown() {
        connections.forEach(FabricConnection::close);
        if (node != null) {
            node.close();
        }
    }

    private FabricConnection connect() {
        FabricConnection c = node.localFabric().connect();
        connections.add(c);
        return c;
    }

    private void restart() {
        connections.forEach(FabricConnection::close);
        connections.clear();
        node.close();
        node = BackendFixture.start(dir.resolve("cp.pm"));
    }

    private static byte[] request(int kind, int frontendId) {
        return ControlMessageLayout.request(kind, frontendId, 0);
    }

    @Test
    void shouldAttachAndDescribeTheFrontendsLog() {
        FabricConnection c = connect();
        AttachReply r = attach(c, 1);
        assertEquals(node.superblock().epoch(), r.backendEpoch());
        assertEquals(1, r.attachEpoch());
        assertEquals(BackendFixture.PAGE, r.pageSize());
        assertEquals(BackendFixture.RING, r.semCapacity());
        assertEquals(BackendFixture.RING, r.redoCapacity());
        assertEquals(BackendFixture.SLAB, r.slabSize());
        assertEquals(BackendFixture.SLABS * BackendFixture.SLAB, r.heapSize());
        assertEquals(0, r.appliedTxId());
        assertEquals(0, r.semValidTail());
        assertEquals(0, r.redoValidTail());
        assertEquals(0, r.ownedSlabs().length);
        byte[] block = BackendFixture.controlBlock(c, 1);
        assertEquals(ControlBlockLayout.STATE_ATTACHED, ControlBlockLayout.state(block));
        assertEquals(1, ControlBlockLayout.attachEpoch(block));
    }

    @Test
    void shouldRefuseAttachOfAFrontendIdOutOfRangeNamingTheLimit() {
        FabricConnection c = connect();
        for (int id : new int[] {BackendFixture.FRONTENDS, -1, 1000}) {
            AsymNvmException e = failsWith(ErrorCode.UNKNOWN_FRONTEND,
                    c.call(request(ControlMessageLayout.KIND_ATTACH, id)));
            assertTrue(e.getMessage().contains("frontend id " + id), e.getMessage());
            assertTrue(e.getMessage().contains("[0, " + BackendFixture.FRONTENDS + ")"), e.getMessage());
        }
        assertEquals(0, attach(c, 0).appliedTxId(), "the connection still attaches after refusals");
    }

    @Test
    void shouldRefuseAShortControlRequestAsMalformed() {
        FabricConnection c = connect();
        for (int length : new int[] {0, 3, ControlMessageLayout.REQUEST_LENGTH - 1}) {
            AsymNvmException e = failsWith(ErrorCode.MALFORMED_FRAME, c.call(new byte[length]));
            assertTrue(e.getMessage().contains(length + " bytes, expected " + ControlMessageLayout.REQUEST_LENGTH),
                    e.getMessage());
        }
        c.call(request(ControlMessageLayout.KIND_PING, 0)).await();
    }

    @Test
    void shouldRefuseAnUnknownControlKindAsBadRequest() {
        FabricConnection c = connect();
        AsymNvmException e = failsWith(ErrorCode.BAD_REQUEST, c.call(request(77, 0)));
        assertTrue(e.getMessage().contains("kind 77"), e.getMessage());
        failsWith(ErrorCode.BAD_REQUEST, c.call(request(0, 0)));
        assertEquals(0, c.call(request(ControlMessageLayout.KIND_PING, 0)).await().bytes().length);
    }

    @Test
    void shouldRefuseEveryOperationBeforeAttach() {
        FabricConnection c = connect();
        failsWith(ErrorCode.NOT_ATTACHED, c.read(RegionIds.HEAP, 0, 64));
        failsWith(ErrorCode.NOT_ATTACHED, c.read(RegionIds.control(0), 0, 64));
        failsWith(ErrorCode.NOT_ATTACHED, c.write(RegionIds.redo(0), 0, new byte[64], 0, 64));
        failsWith(ErrorCode.NOT_ATTACHED, c.compareAndSwap(RegionIds.semantic(0), 0, 0, 1));
        failsWith(ErrorCode.NOT_ATTACHED, c.call(request(ControlMessageLayout.KIND_GRANT_SLAB, 0)));
        failsWith(ErrorCode.NOT_ATTACHED, c.call(request(ControlMessageLayout.KIND_DETACH, 0)));
    }

    @Test
    void shouldGrantTheHeapReadOnlyAndOnlyTheFrontendsOwnRings() {
        FabricConnection c = connect();
        attach(c, 0);
        c.read(RegionIds.HEAP, 0, 256).await();
        AsymNvmException e = failsWith(ErrorCode.ACCESS_DENIED, c.write(RegionIds.HEAP, 0, new byte[8], 0, 8));
        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        failsWith(ErrorCode.ACCESS_DENIED, c.compareAndSwap(RegionIds.HEAP, 0, 0, 1));
        failsWith(ErrorCode.ACCESS_DENIED, c.write(RegionIds.control(0), 0, new byte[8], 0, 8));
        failsWith(ErrorCode.ACCESS_DENIED, c.write(RegionIds.redo(1), 0, new byte[64], 0, 64));
        failsWith(ErrorCode.ACCESS_DENIED, c.write(RegionIds.semantic(1), 0, new byte[64], 0, 64));
        failsWith(ErrorCode.ACCESS_DENIED, c.read(RegionIds.control(1), 0, 64));
        c.write(RegionIds.semantic(0), 0, new byte[64], 0, 64).await();
        c.write(RegionIds.redo(0), BackendFixture.RING - 64, new byte[64], 0, 64).await();
    }

    @Test
    void shouldKeepTheConnectionWorkingAfterErrorsAndLeaveOtherFrontendsUnaffected() {
        FabricConnection zero = connect();
        FabricConnection one = connect();
        attach(zero, 0);
        attach(one, 1);
        byte[] data = BackendFixture.bytes(64, 1);
        failsWith(ErrorCode.ACCESS_DENIED, zero.write(RegionIds.redo(1), 0, data, 0, 64));
        failsWith(ErrorCode.OUT_OF_BOUNDS, zero.read(RegionIds.HEAP, BackendFixture.SLABS * BackendFixture.SLAB, 1));
        failsWith(ErrorCode.OUT_OF_BOUNDS, zero.write(RegionIds.semantic(0), BackendFixture.RING - 32, data, 0, 64));
        failsWith(ErrorCode.ACCESS_DENIED, zero.read(9, 0, 8));
        failsWith(ErrorCode.BAD_REQUEST, zero.call(request(99, 0)));
        failsWith(ErrorCode.MALFORMED_FRAME, zero.call(new byte[1]));
        assertTrue(zero.isOpen());
        zero.write(RegionIds.semantic(0), 128, data, 0, 64).await();
        assertArrayEquals(data, zero.read(RegionIds.semantic(0), 128, 64).await().bytes());
        one.write(RegionIds.semantic(1), 128, data, 0, 64).await();
        assertArrayEquals(data, one.read(RegionIds.semantic(1), 128, 64).await().bytes());
        assertEquals(0, grantSlab(one)[0], "frontend 1 unaffected by frontend 0's errors");
    }

    @Test
    void shouldGrantDistinctSlabsUntilNoneAreLeft() {
        FabricConnection zero = connect();
        FabricConnection one = connect();
        attach(zero, 0);
        attach(one, 1);
        Set<Long> granted = new HashSet<>();
        for (int i = 0; i < BackendFixture.SLABS; i++) {
            long[] slab = grantSlab(i % 2 == 0 ? zero : one);
            assertTrue(granted.add(slab[0]), "slab " + slab[0] + " granted twice");
            assertEquals(slab[0] * BackendFixture.SLAB, slab[1], "heap offset of the slab");
            assertTrue(slab[0] >= 0 && slab[0] < BackendFixture.SLABS);
        }
        AsymNvmException e = failsWith(ErrorCode.NO_SPACE,
                zero.call(request(ControlMessageLayout.KIND_GRANT_SLAB, 0)));
        assertTrue(e.getMessage().contains(String.valueOf(BackendFixture.SLABS)), e.getMessage());
    }

    @Test
    void shouldInitialiseTheAllocatorHeaderOfAGrantedSlab() {
        FabricConnection c = connect();
        attach(c, 0);
        long[] slab = grantSlab(c);
        byte[] header = BackendFixture.heap(c, slab[1], io.asymnvm.core.layout.SlabHeaderLayout.HEADER_LENGTH);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(header).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(io.asymnvm.core.layout.SlabHeaderLayout.MAGIC, b.getLong(0));
        assertEquals(io.asymnvm.core.layout.SlabHeaderLayout.HEADER_LENGTH, b.getLong(8));
    }

    @Test
    void shouldPersistSlabOwnershipAndAttachEpochAcrossRestart() {
        FabricConnection zero = connect();
        FabricConnection one = connect();
        attach(zero, 0);
        attach(one, 1);
        long a = grantSlab(zero)[0];
        long b = grantSlab(one)[0];
        long c = grantSlab(zero)[0];
        restart();
        AttachReply r0 = attach(connect(), 0);
        AttachReply r1 = attach(connect(), 1);
        long[] owned0 = r0.ownedSlabs().clone();
        Arrays.sort(owned0);
        assertArrayEquals(new long[] {Math.min(a, c), Math.max(a, c)}, owned0);
        assertArrayEquals(new long[] {b}, r1.ownedSlabs());
        assertEquals(2, r0.attachEpoch(), "attach epoch persisted and incremented");
        long next = grantSlab(connections.get(0))[0];
        assertFalse(next == a || next == b || next == c, "a restart never hands out an owned slab");
    }

    @Test
    void shouldFenceTheOlderSessionWhenTheSameFrontendAttachesAgain() {
        FabricConnection old = connect();
        AttachReply first = attach(old, 0);
        old.read(RegionIds.HEAP, 0, 8).await();
        FabricConnection fresh = connect();
        AttachReply second = attach(fresh, 0);
        assertEquals(first.attachEpoch() + 1, second.attachEpoch());

        AsymNvmException e = failsWith(ErrorCode.STALE_EPOCH, old.read(RegionIds.HEAP, 0, 8));
        assertTrue(e.getMessage().contains("fenced"), e.getMessage());
        failsWith(ErrorCode.STALE_EPOCH, old.write(RegionIds.redo(0), 0, new byte[64], 0, 64));
        failsWith(ErrorCode.STALE_EPOCH, old.flush(0, true));
        failsWith(ErrorCode.STALE_EPOCH, old.call(request(ControlMessageLayout.KIND_GRANT_SLAB, 0)));
        assertFalse(old.isOpen(), "a fenced connection reports itself closed");

        fresh.write(RegionIds.redo(0), 0, new byte[64], 0, 64).await();
        fresh.flush(0, true).await();
        grantSlab(fresh);
        assertTrue(fresh.isOpen());
    }

    @Test
    void shouldRefuseReattachOnAFencedSessionAndKeepTheNewerOneWorking() {
        FabricConnection old = connect();
        attach(old, 0);
        FabricConnection fresh = connect();
        AttachReply current = attach(fresh, 0);
        failsWith(ErrorCode.STALE_EPOCH, old.call(request(ControlMessageLayout.KIND_ATTACH, 0)));
        fresh.read(RegionIds.HEAP, 0, 8).await();
        grantSlab(fresh);
        assertEquals(current.attachEpoch(), ControlBlockLayout.attachEpoch(BackendFixture.controlBlock(fresh, 0)),
                "a refused attach does not bump the epoch");
    }

    @Test
    void shouldNotFenceASessionThatMovedToAnotherFrontendId() {
        FabricConnection moving = connect();
        attach(moving, 0);
        attach(moving, 1);
        attach(connect(), 0);
        moving.read(RegionIds.HEAP, 0, 8).await();
        moving.write(RegionIds.redo(1), 0, new byte[64], 0, 64).await();
        failsWith(ErrorCode.ACCESS_DENIED, moving.write(RegionIds.redo(0), 0, new byte[64], 0, 64));
        assertTrue(moving.isOpen(), "a new incarnation of frontend 0 does not fence frontend 1's session");
    }

    @Test
    void shouldNotFenceOtherFrontendsOnReattach() {
        FabricConnection zero = connect();
        FabricConnection one = connect();
        attach(zero, 0);
        attach(one, 1);
        attach(connect(), 0);
        one.read(RegionIds.HEAP, 0, 8).await();
        grantSlab(one);
        assertTrue(one.isOpen());
    }

    @Test
    void shouldRevokeAccessOnDetachAndAllowALaterAttach() {
        FabricConnection c = connect();
        attach(c, 0);
        c.call(request(ControlMessageLayout.KIND_DETACH, 0)).await();
        failsWith(ErrorCode.ACCESS_DENIED, c.read(RegionIds.HEAP, 0, 8));
        FabricConnection again = connect();
        AttachReply r = attach(again, 0);
        assertEquals(2, r.attachEpoch());
        assertEquals(ControlBlockLayout.STATE_ATTACHED, ControlBlockLayout.state(BackendFixture.controlBlock(again, 0)));
    }

    @Test
    void shouldRecordADetachedStateInTheControlBlock() {
        FabricConnection c = connect();
        attach(c, 1);
        c.call(request(ControlMessageLayout.KIND_DETACH, 1)).await();
        assertEquals(ControlBlockLayout.STATE_DETACHED, ControlBlockLayout.state(node.frontendLog(1).controlBlock()));
    }

    @Test
    void shouldStampTheDurableWatermarkOnAStampedFlush() {
        FabricConnection c = connect();
        attach(c, 0);
        byte[] record = SemanticRecordLayout.encode(0, 1, 0xFEED, BackendFixture.bytes(40, 1), 40);
        c.write(RegionIds.semantic(0), 0, record, 0, record.length).await();
        c.flush(record.length, true).await();
        assertEquals(record.length, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)));
        c.flush(999, false).await();
        assertEquals(record.length, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)),
                "unstamped flush");
    }
}
