package io.asymnvm.backend.slab;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendFixture;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.SlabHeaderLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.asymnvm.backend.BackendFixture.attach;
import static io.asymnvm.backend.BackendFixture.failsWith;
import static io.asymnvm.backend.BackendFixture.grantSlab;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Slab quotas and slab returns on the backend: what is refused, what is persisted before the reply. */
@Timeout(60)
class SlabTableTest {
    @TempDir
    Path dir;

    private BackendNode node;
    private final List<FabricConnection> connections = new ArrayList<>();

    @AfterEach
    void tearDown() {
        connections.forEach(FabricConnection::close);
        if (node != null) {
            node.close();
        }
    }

    private void start(int quota) {
        node = BackendNode.start(BackendFixture.config(dir.resolve("slabs.pm")).slabQuota(quota).conclude());
    }

    private void stop() {
        connections.forEach(FabricConnection::close);
        connections.clear();
        node.close();
        node = null;
    }

    private FabricConnection attached(int frontendId) {
        FabricConnection c = node.localFabric().connect();
        connections.add(c);
        attach(c, frontendId);
        return c;
    }

    private static byte[] returnSlab(FabricConnection c, long slab) {
        return c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_RETURN_SLAB, 0, slab)).await().bytes();
    }

    private long fileOffset(long slab) {
        return node.superblock().slabOffset((int) slab);
    }

    @Test
    void shouldRefuseAGrantBeyondTheQuotaNamingHoldingsAndQuota() {
        start(3);
        FabricConnection c = attached(0);
        for (int i = 0; i < 3; i++) {
            grantSlab(c);
        }
        AsymNvmException e = failsWith(ErrorCode.QUOTA_EXCEEDED,
                c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_GRANT_SLAB, 0, 0)));
        assertTrue(e.getMessage().contains("frontend 0 holds 3 slabs, quota 3"), e.getMessage());
        assertEquals(3, attach(node.localFabric().connect(), 0).ownedSlabs().length, "nothing granted by the refusal");
        grantSlab(attached(1)); // another frontend has its own quota
    }

    @Test
    void shouldRefuseANegativeQuotaBeforeStarting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BackendFixture.config(dir.resolve("q.pm")).slabQuota(-1).conclude());
        assertTrue(e.getMessage().contains("slab quota") && e.getMessage().contains("-1"), e.getMessage());
    }

    @Test
    void shouldRecordAReturnDurablyAndGrantTheSlabAgainZeroed() {
        start(0);
        FabricConnection c = attached(0);
        long first = grantSlab(c)[0];
        long second = grantSlab(c)[0];
        long third = grantSlab(c)[0];
        assertTrue(first < second && second < third);
        long secondAt = fileOffset(second);
        stop();
        // the previous owner used the second slab: blocks up to a bump offset, then freed them all (live word 1)
        long used = SlabHeaderLayout.HEADER_LENGTH + 4096;
        BackendFixture.patchFile(dir.resolve("slabs.pm"), secondAt + SlabHeaderLayout.BUMP_OFFSET, le(used));
        BackendFixture.patchFile(dir.resolve("slabs.pm"), secondAt + SlabHeaderLayout.HEADER_LENGTH,
                BackendFixture.bytes(4096, 7));
        start(0);
        c = attached(0);
        assertEquals(0, returnSlab(c, second).length);
        stop();
        start(0); // the return survives a restart: it was persisted before the reply
        long[] owned = attach(node.localFabric().connect(), 0).ownedSlabs();
        assertArrayEquals(new long[] {first, third}, owned);
        FabricConnection other = attached(1);
        long[] granted = grantSlab(other);
        assertEquals(second, granted[0], "the returned slab is the lowest free one");
        ByteBuffer header = ByteBuffer.wrap(BackendFixture.heap(other, granted[1], SlabHeaderLayout.HEADER_LENGTH
                + 4096)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(SlabHeaderLayout.MAGIC, header.getLong(SlabHeaderLayout.MAGIC_OFFSET));
        assertEquals(SlabHeaderLayout.HEADER_LENGTH, header.getLong(SlabHeaderLayout.BUMP_OFFSET));
        assertEquals(SlabHeaderLayout.LIVE_EMPTY, header.getLong(SlabHeaderLayout.LIVE_OFFSET));
        for (int i = SlabHeaderLayout.HEADER_LENGTH; i < header.capacity(); i++) {
            assertEquals(0, header.get(i), "byte " + i + " the previous owner left is zeroed");
        }
    }

    private static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    @Test
    void shouldRefuseReturnsOfSlabsNotOwnedFirstOrNotEmpty() {
        start(0);
        FabricConnection zero = attached(0);
        long first = grantSlab(zero)[0];
        long second = grantSlab(zero)[0];
        long secondAt = fileOffset(second);
        FabricConnection one = attached(1);
        long othersSlab = grantSlab(one)[0];

        assertTrue(failsWith(ErrorCode.ACCESS_DENIED, zero.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_RETURN_SLAB, 0, othersSlab))).getMessage()
                .contains("belongs to frontend 1"));
        failsWith(ErrorCode.ACCESS_DENIED, zero.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_RETURN_SLAB, 0, BackendFixture.SLABS - 1)));
        failsWith(ErrorCode.BAD_REQUEST, zero.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_RETURN_SLAB, 0, BackendFixture.SLABS)));
        assertTrue(failsWith(ErrorCode.BAD_REQUEST, zero.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_RETURN_SLAB, 0, first))).getMessage().contains("first slab"));
        stop();
        BackendFixture.patchFile(dir.resolve("slabs.pm"), secondAt + SlabHeaderLayout.LIVE_OFFSET, le(2));
        start(0);
        zero = attached(0);
        assertTrue(failsWith(ErrorCode.BAD_REQUEST, zero.call(ControlMessageLayout.request(
                ControlMessageLayout.KIND_RETURN_SLAB, 0, second))).getMessage().contains("not empty"));
        assertArrayEquals(new long[] {first, second}, attach(node.localFabric().connect(), 0).ownedSlabs(),
                "nothing refused changed the table");
    }

    @Test
    void shouldNeverGrantBelowAFrontendsFirstSlab() {
        start(0);
        FabricConnection zero = attached(0);
        long a = grantSlab(zero)[0];
        long b = grantSlab(zero)[0];
        FabricConnection one = attached(1);
        long home = grantSlab(one)[0];
        assertEquals(0, returnSlab(zero, b).length); // a fresh slab: live word 1
        long next = grantSlab(one)[0];
        assertTrue(next > home, "slab " + next + " granted below frontend 1's first slab " + home);
        assertEquals(b, grantSlab(zero)[0], "frontend 0 gets it back: above its first slab " + a);
    }
}
