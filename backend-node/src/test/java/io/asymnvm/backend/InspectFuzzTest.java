package io.asymnvm.backend;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.testing.FuzzSeeds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes {@code inspect} ({@link InspectTool#inspect}) over mutations of a small valid PM image (the 1 MiB
 * {@link BackendFixture} geometry with attached frontends, a granted slab, semantic records up to the durable
 * watermark, an applied redo batch and a pending one), built once per test class.
 *
 * <p>Input: {@code flags(1)}, then mutations of 5 bytes each: {@code offset(4, LE, taken modulo the image size)
 * value(1)}. Flag bit 0 recomputes the superblock's CRC after mutating, bit 1 the CRCs of both checkpoint slots of
 * every frontend, so that the fuzzer reaches what those CRCs guard (geometry, heads, watermarks).
 *
 * <p>Contract: inspect returns a report whose text and JSON render, or refuses the file with a typed
 * {@link AsymNvmException} ({@code CORRUPT_SUPERBLOCK}, {@code FORMAT_VERSION_MISMATCH}); an unchanged image reports
 * no problem; nothing else escapes, and the file is never written.
 */
class InspectFuzzTest {
    private static final int FLAG_RESEAL_SUPERBLOCK = 1;
    private static final int FLAG_RESEAL_CHECKPOINTS = 2;
    private static final int MUTATION = 5;

    private static Path dir;
    private static Path pm;
    private static byte[] image;
    private static Superblock sb;

    @BeforeAll
    static void buildImage() throws IOException {
        dir = FuzzSeeds.scratch("inspect-fuzz");
        Path built = dir.resolve("built.pm");
        long semEnd = 0;
        long semAfterTx2 = 0;
        byte[] pending;
        try (BackendNode node = BackendFixture.start(built); FabricConnection c = node.localFabric().connect();
             FabricConnection other = node.localFabric().connect()) {
            BackendFixture.attach(c, 0);
            BackendFixture.attach(other, 1);
            long at = BackendFixture.grantSlab(c)[1] + 1024;
            for (int tx = 1; tx <= 3; tx++) {
                byte[] r = SemanticRecordLayout.encode(semEnd, tx, 0xFEED, BackendFixture.bytes(40, tx), 40);
                c.write(RegionIds.semantic(0), semEnd, r, 0, r.length).await();
                semEnd += r.length;
                semAfterTx2 = tx == 2 ? semEnd : semAfterTx2;
            }
            c.flush(semEnd, true).await();
            byte[] applied = BackendFixture.batch().write(at, BackendFixture.bytes(100, 1)).commit(1)
                    .write(at + 4096, BackendFixture.bytes(8, 2)).commit(2).seal(0, semAfterTx2);
            BackendFixture.writeRedo(c, 0, 0, applied);
            node.awaitReplayed();
            sb = node.superblock();
            pending = BackendFixture.batch().write(at + 64, BackendFixture.bytes(16, 3)).commit(3)
                    .seal(applied.length, semEnd);
            long redoAt = sb.redoRingOf(0) + applied.length;
            node.close();
            BackendFixture.patchFile(built, redoAt, pending); // written after the backend stopped: not applied
        }
        image = Files.readAllBytes(built);
        pm = dir.resolve("fuzzed.pm");
        InspectReport clean = InspectTool.inspect(built);
        assertTrue(clean.problems().isEmpty(), "the seed image is clean: " + clean.problems());
    }

    @AfterAll
    static void removeImage() {
        FuzzSeeds.removeScratch(dir);
    }

    @FuzzTest(maxDuration = FuzzSeeds.MAX_DURATION)
    void fuzzInspect(byte[] input) throws IOException {
        byte[] mutated = image.clone();
        int flags = input.length == 0 ? 0 : input[0];
        ByteBuffer in = ByteBuffer.wrap(input).order(ByteOrder.LITTLE_ENDIAN);
        boolean changed = false;
        for (int at = 1; at + MUTATION <= input.length; at += MUTATION) {
            int offset = (int) (Integer.toUnsignedLong(in.getInt(at)) % mutated.length);
            changed |= mutated[offset] != in.get(at + 4);
            mutated[offset] = in.get(at + 4);
        }
        if ((flags & FLAG_RESEAL_SUPERBLOCK) != 0) {
            resealSuperblock(mutated);
        }
        if ((flags & FLAG_RESEAL_CHECKPOINTS) != 0) {
            resealCheckpoints(mutated);
        }
        Files.write(pm, mutated);
        try {
            InspectReport report = InspectTool.inspect(pm);
            assertFalse(report.toText().isEmpty());
            assertFalse(report.toJson().isEmpty());
            if (!changed && flags == 0) {
                assertTrue(report.problems().isEmpty(), "problems in the unchanged image: " + report.problems());
            }
        } catch (AsymNvmException e) {
            assertNotEquals(ErrorCode.UNKNOWN, e.errorCode(), e.getMessage());
            assertTrue(e.errorCode() == ErrorCode.CORRUPT_SUPERBLOCK
                    || e.errorCode() == ErrorCode.FORMAT_VERSION_MISMATCH, e.getMessage());
            assertTrue(changed || flags != 0, "the unchanged image refused: " + e.getMessage());
        }
        assertArrayEquals(mutated, Files.readAllBytes(pm), "inspect wrote the image");
    }

    private static void resealSuperblock(byte[] b) {
        CRC32C crc = new CRC32C();
        crc.update(b, 0, SuperblockLayout.CRC_OFFSET);
        ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putInt(SuperblockLayout.CRC_OFFSET, (int) crc.getValue());
    }

    private static void resealCheckpoints(byte[] b) {
        ByteBuffer w = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        for (int f = 0; f < sb.maxFrontends(); f++) {
            for (int slot : new int[] {ControlBlockLayout.SLOT0_OFFSET, ControlBlockLayout.SLOT1_OFFSET}) {
                int at = (int) sb.controlBlockOf(f) + slot;
                CRC32C crc = new CRC32C();
                crc.update(b, at, ControlBlockLayout.SLOT_CRC_OFFSET);
                w.putInt(at + ControlBlockLayout.SLOT_CRC_OFFSET, (int) crc.getValue());
            }
        }
    }

    /** Seeds: no change, single changes in each area (superblock, slab table, control block, both rings). */
    static Map<String, byte[]> seeds(Superblock sb) {
        Map<String, byte[]> s = new LinkedHashMap<>();
        s.put("unchanged", new byte[] {0});
        s.put("superblock-slab-count", input(FLAG_RESEAL_SUPERBLOCK, SuperblockLayout.SLAB_COUNT_OFFSET, 0x7F));
        s.put("slab-owner", input(0, sb.slabTableOffset() + 8, 0x33));
        long redoHead = sb.controlBlockOf(0) + ControlBlockLayout.SLOT0_OFFSET
                + ControlBlockLayout.SLOT_REDO_HEAD_OFFSET;
        s.put("checkpoint-head", input(FLAG_RESEAL_CHECKPOINTS, redoHead, 0x40));
        s.put("watermark", input(0, sb.controlBlockOf(0) + ControlBlockLayout.DURABLE_SEM_TAIL_OFFSET + 1, 0x10));
        s.put("semantic-record", input(0, sb.semRingOf(0) + 70, 0x01));
        s.put("redo-record-length", input(0, sb.redoRingOf(0) + 4, 0x7F));
        return s;
    }

    private static byte[] input(int flags, long offset, int value) {
        return ByteBuffer.allocate(1 + MUTATION).order(ByteOrder.LITTLE_ENDIAN).put((byte) flags)
                .putInt((int) offset).put((byte) value).array();
    }

    @Test
    void committedSeedsMatchTheirGenerator() {
        FuzzSeeds.check(getClass(), "fuzzInspect", seeds(sb));
        assertEquals(BackendFixture.SIZE, image.length);
    }
}
