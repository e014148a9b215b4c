package io.asymnvm.core.layout;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.region.MappedRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.UUID;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class SuperblockLayoutTest {
    private static final int PAGE = 4096;
    private static final long SLAB = 1 << 20;
    private static final long FILE = 16L << 20;
    private static final long SEM = 64 * 1024;
    private static final long REDO = 128 * 1024;
    private static final UUID ID = UUID.fromString("01234567-89ab-cdef-0123-456789abcdef");

    @TempDir
    Path dir;

    private static SuperblockLayout.Superblock plan(long fileSize) {
        return SuperblockLayout.plan(fileSize, PAGE, SLAB, 4, SEM, REDO, ID, 1_700_000_000_000L);
    }

    private static void reseal(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes, 0, SuperblockLayout.CRC_OFFSET);
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(SuperblockLayout.CRC_OFFSET, (int) c.getValue());
    }

    @Test
    void planProducesConsistentNonOverlappingGeometry() {
        SuperblockLayout.Superblock sb = plan(FILE);
        assertEquals(PAGE, sb.pageSize());
        assertEquals(FILE, sb.fileSize());
        assertEquals(SLAB, sb.slabSize());
        assertEquals(4, sb.maxFrontends());
        assertEquals(PAGE, sb.slabTableOffset(), "slab table follows the superblock page");
        assertTrue(sb.logAreaOffset() >= sb.slabTableOffset() + sb.slabCount() * SlabTableLayout.ENTRY_LENGTH);
        assertEquals(0, sb.logAreaOffset() % PAGE);
        assertEquals(PAGE + SEM + REDO, sb.logAreaStride());
        assertTrue(sb.heapOffset() >= sb.logAreaOf(4), "heap after the last log area");
        assertEquals(0, sb.heapOffset() % SLAB, "heap slab-aligned");
        assertTrue(sb.slabCount() >= 1);
        assertTrue(sb.heapOffset() + sb.slabCount() * SLAB <= FILE);
        assertTrue(sb.heapOffset() + (sb.slabCount() + 1) * SLAB > FILE, "every whole slab that fits is used");
        assertEquals(1, sb.epoch());

        assertEquals(sb.logAreaOffset(), sb.controlBlockOf(0));
        assertEquals(sb.logAreaOffset() + 2 * sb.logAreaStride(), sb.logAreaOf(2));
        assertEquals(sb.logAreaOf(1) + PAGE, sb.semRingOf(1));
        assertEquals(sb.semRingOf(1) + SEM, sb.redoRingOf(1));
        assertEquals(sb.redoRingOf(1) + REDO, sb.logAreaOf(2));
        assertEquals(sb.heapOffset() + 3 * SLAB, sb.slabOffset(3));
    }

    @Test
    void encodeDecodeRoundTrip() {
        SuperblockLayout.Superblock sb = plan(FILE);
        byte[] bytes = SuperblockLayout.encode(sb);
        assertEquals(SuperblockLayout.LENGTH, bytes.length);
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(SuperblockLayout.MAGIC, b.getLong(SuperblockLayout.MAGIC_OFFSET));
        assertEquals("ASYMNVM1", new String(bytes, 0, 8, java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals(SuperblockLayout.FORMAT_VERSION, b.getInt(SuperblockLayout.VERSION_OFFSET));
        assertEquals(sb, SuperblockLayout.decode(bytes, "test.img", FILE));
    }

    @Test
    void writeThenDecodeFromRegion() {
        try (MappedRegion r = MappedRegion.create(dir.resolve("pm.img"), FILE, MappedRegion.MapMode.FILE)) {
            SuperblockLayout.Superblock sb = plan(FILE);
            SuperblockLayout.write(r, sb);
            assertEquals(sb, SuperblockLayout.decode(r.read(0, SuperblockLayout.LENGTH), r.name(), r.size()));
        }
    }

    @Test
    void wrongMagicIsCorruptionAtOffsetZero() {
        byte[] bytes = SuperblockLayout.encode(plan(FILE));
        bytes[3] ^= 0x40;
        reseal(bytes);
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> SuperblockLayout.decode(bytes, "pm0.img", FILE));
        assertEquals(ErrorCode.CORRUPT_RECORD, e.errorCode());
        assertEquals(SuperblockLayout.MAGIC_OFFSET, e.offset());
        assertEquals("pm0.img", e.where());
        assertTrue(e.getMessage().contains("pm0.img"), e.getMessage());
        assertTrue(e.getMessage().contains(Long.toHexString(SuperblockLayout.MAGIC)), e.getMessage());
    }

    @Test
    void allZeroImageIsCorruption() {
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> SuperblockLayout.decode(new byte[SuperblockLayout.LENGTH], "blank", FILE));
        assertEquals(0, e.offset());
    }

    @Test
    void wrongCrcIsCorruptionAtCrcOffset() {
        SuperblockLayout.Superblock sb = plan(FILE);
        byte[] good = SuperblockLayout.encode(sb);
        // any flipped byte in a field covered by the CRC (other than magic/version, which are checked first)
        for (int i = SuperblockLayout.PAGE_SIZE_OFFSET; i < SuperblockLayout.LENGTH; i++) {
            byte[] bytes = good.clone();
            bytes[i] ^= 0x01;
            int at = i;
            CorruptRecordException e = assertThrows(CorruptRecordException.class,
                    () -> SuperblockLayout.decode(bytes, "pm1.img", FILE), "flip at " + at);
            assertEquals(SuperblockLayout.CRC_OFFSET, e.offset(), "flip at " + at);
            assertEquals("pm1.img", e.where());
        }
    }

    @Test
    void crcValidGeometryThatDiffersFromThePlanIsCorruptionNamingTheField() {
        // inspect fuzzer's crash-5ad23f04: a resealed superblock whose log area lies beyond the file
        long[][] damage = {{SuperblockLayout.LOG_AREA_OFFSET_OFFSET, 1L << 44},
                {SuperblockLayout.HEAP_OFFSET_OFFSET, 0}, {SuperblockLayout.SLAB_TABLE_OFFSET_OFFSET, 0},
                {SuperblockLayout.LOG_AREA_STRIDE_OFFSET, PAGE}, {SuperblockLayout.SLAB_COUNT_OFFSET, 1},
                {SuperblockLayout.SLAB_SIZE_OFFSET, 0}, {SuperblockLayout.SEM_RING_CAPACITY_OFFSET, PAGE + 1},
                {SuperblockLayout.MAX_FRONTENDS_OFFSET, 0}};
        for (long[] d : damage) {
            byte[] bytes = SuperblockLayout.encode(plan(FILE));
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            if (d[0] == SuperblockLayout.MAX_FRONTENDS_OFFSET) {
                b.putInt((int) d[0], (int) d[1]);
            } else {
                b.putLong((int) d[0], d[1]);
            }
            reseal(bytes);
            CorruptRecordException e = assertThrows(CorruptRecordException.class,
                    () -> SuperblockLayout.decode(bytes, "forged.img", FILE), "field at " + d[0]);
            assertEquals(d[0], e.offset(), e.getMessage());
            assertEquals("forged.img", e.where());
        }
    }

    @Test
    void otherFormatVersionNamesBothVersions() {
        byte[] bytes = SuperblockLayout.encode(plan(FILE));
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(SuperblockLayout.VERSION_OFFSET, 7);
        reseal(bytes);
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> SuperblockLayout.decode(bytes, "old.img", FILE));
        assertEquals(ErrorCode.FORMAT_VERSION_MISMATCH, e.errorCode());
        assertTrue(e.getMessage().contains("version 7"), e.getMessage());
        assertTrue(e.getMessage().contains("version " + SuperblockLayout.FORMAT_VERSION), e.getMessage());
        assertTrue(e.getMessage().contains("old.img"), e.getMessage());
    }

    @Test
    void shortImageIsCorruption() {
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> SuperblockLayout.decode(new byte[10], "short", FILE));
        assertTrue(e.getMessage().contains("0x" + Integer.toHexString(SuperblockLayout.LENGTH)), e.getMessage());
    }

    @Test
    void fileSizeMismatchIsCorruption() {
        byte[] bytes = SuperblockLayout.encode(plan(FILE));
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> SuperblockLayout.decode(bytes, "pm.img", FILE + PAGE));
        assertEquals(SuperblockLayout.FILE_SIZE_OFFSET, e.offset());
    }

    @Test
    void heapPastEndOfFileIsCorruption() {
        byte[] bytes = SuperblockLayout.encode(plan(FILE));
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(SuperblockLayout.SLAB_COUNT_OFFSET, b.getLong(SuperblockLayout.SLAB_COUNT_OFFSET) + 1);
        reseal(bytes);
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> SuperblockLayout.decode(bytes, "pm.img", FILE));
        assertEquals(SuperblockLayout.HEAP_OFFSET_OFFSET, e.offset());
    }

    @Test
    void planRefusesTooSmallSizeNamingSizeAndMinimum() {
        long tooSmall = SLAB + SLAB / 2;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plan(tooSmall));
        String msg = e.getMessage();
        assertTrue(msg.contains(String.valueOf(tooSmall)), msg);
        int at = msg.lastIndexOf("minimum");
        assertTrue(at >= 0, msg);
        long minimum = Long.parseLong(msg.substring(msg.lastIndexOf(' ') + 1));
        assertTrue(minimum > tooSmall, msg);

        // the stated minimum is truthful: it plans, with exactly one slab, and one byte less does not
        SuperblockLayout.Superblock sb = plan(minimum);
        assertEquals(1, sb.slabCount());
        assertThrows(IllegalArgumentException.class, () -> plan(minimum - 1));
    }

    @Test
    void identityAndTimestampSurviveRoundTrip() {
        UUID other = UUID.randomUUID();
        SuperblockLayout.Superblock sb = SuperblockLayout.plan(FILE, PAGE, SLAB, 2, SEM, REDO, other, 42L);
        SuperblockLayout.Superblock back = SuperblockLayout.decode(SuperblockLayout.encode(sb), "x", FILE);
        assertEquals(other, back.identity());
        assertEquals(42L, back.createdMillis());
        assertNotEquals(plan(FILE).identity(), back.identity());
    }
}
