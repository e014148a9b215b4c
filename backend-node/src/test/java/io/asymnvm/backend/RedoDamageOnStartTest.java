package io.asymnvm.backend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.recovery.log.RingDamage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.asymnvm.backend.BackendFixture.attach;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A redo batch that fails its CRC while a valid batch follows it is damage, and quarantines its frontend at start;
 * after an unclean shutdown the same picture is what a power failure leaves (a later batch's lines reached the
 * media, an earlier one's did not), so it is the ring's torn tail and nothing is quarantined.
 */
@Timeout(60)
class RedoDamageOnStartTest {
    @TempDir
    Path dir;

    /** Frontend 0's redo ring gets a damaged batch at position 0 and a valid one after it, offline. */
    private long[] damageOffline(Path pm) {
        Superblock sb;
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            sb = node.superblock();
            attach(c, 0);
        }
        byte[] first = BackendFixture.batch().write(0, new byte[8]).commit(1).seal(0, 0);
        byte[] second = BackendFixture.batch().write(8, new byte[8]).commit(2).seal(first.length, 0);
        first[LogRecordLayout.COMMON_HEADER_LENGTH + 20] ^= 0x08;
        BackendFixture.patchFile(pm, sb.redoRingOf(0), first);
        BackendFixture.patchFile(pm, sb.redoRingOf(0) + first.length, second);
        return new long[] {sb.redoRingOf(0), sb.redoRingCapacity()};
    }

    @Test
    void shouldQuarantineADamagedBatchFollowedByAValidOne() {
        Path pm = dir.resolve("redo.pm");
        long[] ring = damageOffline(pm);
        byte[] before = BackendFixture.readFile(pm, ring[0], (int) ring[1]);
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect();
             FabricConnection other = node.localFabric().connect()) {
            RingDamage q = node.frontendLog(0).quarantine();
            assertEquals(ring[0], q.offset());
            assertTrue(q.what().startsWith("crc32c"), q.what());
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> attach(c, 0));
            assertEquals(ErrorCode.RING_CORRUPT, e.errorCode());
            assertTrue(e.getMessage().contains("redo ring of frontend 0") && e.getMessage().contains("offset "
                    + ring[0]), e.getMessage());
            assertEquals(0, attach(other, 1).appliedTxId(), "frontend 1 is served");
        }
        assertArrayEquals(before, BackendFixture.readFile(pm, ring[0], (int) ring[1]), "the ring is kept");
        InspectReport report = InspectTool.inspect(pm);
        assertEquals(ring[0], report.frontends().get(0).quarantine().offset(), report.toText());
    }

    @Test
    void shouldTreatTheSamePictureAfterAnUncleanShutdownAsATornTail() throws IOException {
        Path pm = dir.resolve("redo.pm");
        damageOffline(pm);
        Files.writeString(BackendFixture.markFile(pm), "running pid 1\n");
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            assertNull(node.frontendLog(0).quarantine());
            AttachReply r = attach(c, 0);
            assertEquals(0, r.redoValidTail(), "the torn batch is the tail: the frontend writes again from there");
            assertEquals(0, r.appliedTxId());
        }
    }
}
