package io.asymnvm.backend;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.recovery.log.RingDamage;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.asymnvm.backend.BackendFixture.attach;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Start-up validation of the semantic rings (DESIGN §4): corruption before a ring's durable watermark quarantines
 * that frontend (attach refused with RING_CORRUPT, ring untouched, the others served); a torn record beyond it is
 * a torn tail, truncated.
 */
@Timeout(60)
class CorruptionOnStartTest {
    private static final int RECORDS = 6;
    private static final int ARGS = 70;

    @TempDir
    Path dir;

    private Path pm;
    private Superblock sb;
    private final List<Long> positions = new ArrayList<>();
    private long tail;

    @BeforeEach
    void setUp() {
        pm = dir.resolve("sem.pm");
    }

    /** Writes {@link #RECORDS} semantic records for frontend 0, stamps {@code watermarkIndex}'s position durable. */
    private void writeRecords(int watermarkIndex) {
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            sb = node.superblock();
            attach(c, 0);
            long position = 0;
            for (int i = 1; i <= RECORDS; i++) {
                byte[] r = SemanticRecordLayout.encode(position, i, 0xFEED, BackendFixture.bytes(ARGS, i), ARGS);
                c.write(RegionIds.semantic(0), position, r, 0, r.length).await();
                positions.add(position);
                position += r.length;
            }
            tail = position;
            long watermark = watermarkIndex < RECORDS ? positions.get(watermarkIndex) : tail;
            c.flush(watermark, true).await();
            assertEquals(watermark, ControlBlockLayout.durableSemTail(BackendFixture.controlBlock(c, 0)));
        }
    }

    private long fileOffset(int index) {
        return sb.semRingOf(0) + positions.get(index);
    }

    private String ringName() {
        return pm.toAbsolutePath() + " semantic ring of frontend 0";
    }

    @Test
    void shouldReportTheDurableRecordsOnAttachAfterACleanRestart() {
        writeRecords(RECORDS);
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            AttachReply r = attach(c, 0);
            assertEquals(tail, r.semValidTail());
            assertEquals(RECORDS, r.lastSemTxId());
            assertEquals(0, r.semHead());
            assertEquals(0, r.appliedTxId());
            assertEquals(RECORDS, node.frontendLog(0).scanSemantic().records());
        }
    }

    @Test
    void shouldQuarantineTheFrontendOfACorruptRecordBeforeTheWatermark() throws IOException {
        writeRecords(RECORDS);
        int victim = 2;
        int stored = BackendFixture.readInt(pm, fileOffset(victim) + LogRecordLayout.CRC_OFFSET);
        BackendFixture.flipByte(pm, fileOffset(victim) + SemanticRecordLayout.HEADER_LENGTH + 5);
        byte[] ringBefore = ring();

        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect();
             FabricConnection other = node.localFabric().connect()) {
            RingDamage q = node.frontendLog(0).quarantine();
            assertEquals(ringName(), q.ring());
            assertEquals(fileOffset(victim), q.offset());
            assertEquals(Integer.toUnsignedLong(stored), q.expected());
            AsymNvmException e = assertThrows(AsymNvmException.class, () -> attach(c, 0));
            assertEquals(ErrorCode.RING_CORRUPT, e.errorCode());
            String m = e.getMessage();
            assertTrue(m.contains("frontend 0 is quarantined"), m);
            assertTrue(m.contains(ringName()), m);
            assertTrue(m.contains("offset " + fileOffset(victim)), m);
            assertTrue(m.contains("crc32c"), m);
            assertTrue(m.contains("expected 0x" + Integer.toHexString(stored)), m);
            assertTrue(m.contains("actual 0x"), m);
            assertEquals(0, attach(other, 1).appliedTxId(), "every other frontend is served");
        }
        assertArrayEquals(ringBefore, ring(), "a quarantined ring is neither truncated nor rewritten");
    }

    @Test
    void shouldQuarantineWhenADurableRecordIsMissingItsHeader() {
        writeRecords(RECORDS);
        BackendFixture.patchFile(pm, fileOffset(4), new byte[64]);
        try (BackendNode node = BackendFixture.start(pm)) {
            RingDamage q = node.frontendLog(0).quarantine();
            assertEquals(fileOffset(4), q.offset());
            assertTrue(q.describe().contains("record position"), q.describe());
        }
    }

    @Test
    void shouldTruncateATornLastRecordBeyondTheWatermark() {
        int last = RECORDS - 1;
        writeRecords(last);
        BackendFixture.flipByte(pm, fileOffset(last) + SemanticRecordLayout.HEADER_LENGTH + 5);
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            AttachReply r = attach(c, 0);
            assertEquals(positions.get(last), r.semValidTail(), "tail truncated at the torn record");
            assertEquals(RECORDS - 1, r.lastSemTxId());
        }
    }

    @Test
    void shouldIgnoreCorruptionBeforeThePersistentHead() {
        writeRecords(RECORDS);
        BackendFixture.flipByte(pm, fileOffset(0) + SemanticRecordLayout.HEADER_LENGTH + 1);
        // the replayer's checkpoint has moved past record 1: it is reclaimable and never read again
        byte[] slot = ControlBlockLayout.encodeSlot(new ControlBlockLayout.Checkpoint(1, 1, 0, positions.get(1)));
        BackendFixture.patchFile(pm, sb.controlBlockOf(0) + ControlBlockLayout.SLOT1_OFFSET, slot);
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            AttachReply r = attach(c, 0);
            assertEquals(positions.get(1), r.semHead());
            assertEquals(tail, r.semValidTail());
            assertEquals(RECORDS, r.lastSemTxId());
            assertEquals(RECORDS - 1, node.frontendLog(0).scanSemantic().records());
        }
    }

    @Test
    void shouldServeTheFrontendAgainOnceTheOperatorRepairedItsRing() throws IOException {
        writeRecords(RECORDS);
        Files.writeString(BackendFixture.markFile(pm), "running pid 1\n");
        long at = fileOffset(3) + SemanticRecordLayout.HEADER_LENGTH;
        byte original = BackendFixture.flipByte(pm, at);
        try (BackendNode node = BackendFixture.start(pm)) {
            assertFalse(node.previousShutdownClean(), "the unclean shutdown is still seen");
            assertEquals(fileOffset(3), node.frontendLog(0).quarantine().offset());
        }
        // the quarantine is not written anywhere: a repaired ring serves again, every record intact
        BackendFixture.patchFile(pm, at, new byte[] {original});
        try (BackendNode node = BackendFixture.start(pm); FabricConnection c = node.localFabric().connect()) {
            assertEquals(null, node.frontendLog(0).quarantine());
            AttachReply r = attach(c, 0);
            assertEquals(RECORDS, r.lastSemTxId());
            assertEquals(tail, r.semValidTail());
        }
    }

    private byte[] ring() {
        try {
            byte[] all = Files.readAllBytes(pm);
            return java.util.Arrays.copyOfRange(all, Math.toIntExact(sb.semRingOf(0)),
                    Math.toIntExact(sb.semRingOf(0) + sb.semRingCapacity()));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
