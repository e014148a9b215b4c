package io.asymnvm.core.region;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(60)
class MappedRegionTest {
    private static final long SIZE = 64 * 1024;

    @TempDir
    Path dir;

    private final List<MappedRegion> opened = new ArrayList<>();

    private MappedRegion create(Path file, long size) {
        MappedRegion r = MappedRegion.create(file, size, MappedRegion.MapMode.FILE);
        opened.add(r);
        return r;
    }

    private MappedRegion open(Path file) {
        MappedRegion r = MappedRegion.open(file, MappedRegion.MapMode.FILE);
        opened.add(r);
        return r;
    }

    @AfterEach
    void closeAll() {
        opened.forEach(MappedRegion::close);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    @Test
    void createMakesFileOfRequestedSizeZeroFilled() throws Exception {
        Path f = dir.resolve("pm.img");
        MappedRegion r = create(f, SIZE);
        assertEquals(SIZE, r.size());
        assertEquals(SIZE, Files.size(f));
        assertArrayEquals(new byte[(int) SIZE], r.read(0, (int) SIZE));
        assertTrue(r.name().contains("pm.img"), r.name());
    }

    @Test
    void byteArrayRoundTripAtVariousOffsets() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        byte[] data = pattern(1000, 7);
        r.write(3, data, 0, data.length);
        assertArrayEquals(data, r.read(3, data.length));

        // sub-range of the source array, and into a sub-range of the destination
        r.write(SIZE - 10, data, 100, 10);
        byte[] dst = new byte[20];
        r.read(SIZE - 10, dst, 5, 10);
        for (int i = 0; i < 10; i++) {
            assertEquals(data[100 + i], dst[5 + i]);
        }
        assertEquals(0, dst[4]);
        assertEquals(0, dst[15]);
        // neighbours untouched
        assertEquals(0, r.read(2, 1)[0]);
        assertEquals(0, r.read(1003, 1)[0]);
    }

    @Test
    void byteBufferRoundTripAdvancesPositions() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        byte[] data = pattern(300, 3);
        ByteBuffer src = ByteBuffer.wrap(data, 50, 200); // position 50, limit 250
        r.write(4096, src);
        assertEquals(250, src.position());
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 50, 250), r.read(4096, 200));

        ByteBuffer dst = ByteBuffer.allocate(210);
        dst.position(10);
        r.read(4096, dst);
        assertEquals(210, dst.position());
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 50, 250),
                java.util.Arrays.copyOfRange(dst.array(), 10, 210));

        ByteBuffer direct = ByteBuffer.allocateDirect(16);
        direct.putLong(0x1122334455667788L).putLong(-1L).flip();
        r.write(8000, direct);
        assertFalse(direct.hasRemaining());
        assertEquals(0x1122334455667788L, ByteBuffer.wrap(r.read(8000, 8)).getLong());
    }

    @Test
    void scalarAccessorsAreLittleEndian() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        r.putLong(16, 0x0102030405060708L);
        assertArrayEquals(new byte[] {8, 7, 6, 5, 4, 3, 2, 1}, r.read(16, 8));
        assertEquals(0x0102030405060708L, r.getLong(16));
        r.putInt(33, 0xA0B0C0D0); // unaligned plain access is fine
        assertArrayEquals(new byte[] {(byte) 0xD0, (byte) 0xC0, (byte) 0xB0, (byte) 0xA0}, r.read(33, 4));
        assertEquals(0xA0B0C0D0, r.getInt(33));
        r.putLong(41, -2L);
        assertEquals(-2L, r.getLong(41));
        r.putLongVolatile(64, 77L);
        assertEquals(77L, r.getLongVolatile(64));
        assertEquals(77L, r.getLong(64));
    }

    @Test
    void outOfBoundsAccessNamesTheRange() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                () -> r.read(SIZE - 4, new byte[8], 0, 8));
        assertTrue(e.getMessage().contains("[" + (SIZE - 4) + ", " + (SIZE + 4) + ")"), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(SIZE)), e.getMessage());

        e = assertThrows(IndexOutOfBoundsException.class, () -> r.write(SIZE, new byte[1], 0, 1));
        assertTrue(e.getMessage().contains("[" + SIZE + ", " + (SIZE + 1) + ")"), e.getMessage());

        e = assertThrows(IndexOutOfBoundsException.class, () -> r.getLong(-8));
        assertTrue(e.getMessage().contains("[-8, 0)"), e.getMessage());

        assertThrows(IndexOutOfBoundsException.class, () -> r.putLong(SIZE - 7, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.getInt(SIZE - 3));
        assertThrows(IndexOutOfBoundsException.class, () -> r.putInt(SIZE - 3, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.write(SIZE - 1, ByteBuffer.allocate(2)));
        assertThrows(IndexOutOfBoundsException.class, () -> r.read(SIZE - 1, ByteBuffer.allocate(2)));
        assertThrows(IndexOutOfBoundsException.class, () -> r.compareAndSetLong(SIZE, 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.getAndAddLong(SIZE, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.persist(SIZE - 1, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> r.zero(0, SIZE + 1));
        assertThrows(IndexOutOfBoundsException.class, () -> r.persist(0, -1));
        // the last full word and the last byte are in range
        r.putLong(SIZE - 8, 5);
        assertEquals(5, r.getLong(SIZE - 8));
        r.write(SIZE - 1, new byte[] {9}, 0, 1);
        assertEquals(9, r.read(SIZE - 1, 1)[0]);
    }

    @Test
    void outOfBoundsWriteLeavesRegionUntouched() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        assertThrows(IndexOutOfBoundsException.class, () -> r.write(SIZE - 4, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, 0, 8));
        assertArrayEquals(new byte[4], r.read(SIZE - 4, 4));
    }

    @Test
    void unalignedAtomicAccessIsRefused() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        for (long off : new long[] {1, 4, 7, 12}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> r.compareAndSetLong(off, 0, 1));
            assertTrue(e.getMessage().contains("unaligned offset " + off), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> r.getAndAddLong(off, 1));
            assertThrows(IllegalArgumentException.class, () -> r.getLongVolatile(off));
            assertThrows(IllegalArgumentException.class, () -> r.putLongVolatile(off, 1));
        }
        // nothing was modified by the refused operations
        assertArrayEquals(new byte[32], r.read(0, 32));
    }

    @Test
    void compareAndSetSemantics() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        r.putLong(128, 10);
        assertFalse(r.compareAndSetLong(128, 11, 20));
        assertEquals(10, r.getLong(128));
        assertTrue(r.compareAndSetLong(128, 10, 20));
        assertEquals(20, r.getLong(128));
        assertFalse(r.compareAndSetLong(128, 10, 30));
        assertEquals(20, r.getLongVolatile(128));
        // neighbouring words untouched
        assertEquals(0, r.getLong(120));
        assertEquals(0, r.getLong(136));
    }

    @Test
    void getAndAddSemantics() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        assertEquals(0, r.getAndAddLong(256, 5));
        assertEquals(5, r.getAndAddLong(256, 7));
        assertEquals(12, r.getAndAddLong(256, -2));
        assertEquals(10, r.getLong(256));
    }

    @Test
    void concurrentGetAndAddLosesNoUpdates() throws Exception {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        int threads = 4;
        int perThread = 20_000;
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    r.getAndAddLong(512, 1);
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        assertEquals((long) threads * perThread, r.getLongVolatile(512));
    }

    @Test
    void zeroClearsOnlyTheRange() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        byte[] ones = new byte[200];
        java.util.Arrays.fill(ones, (byte) 1);
        r.write(0, ones, 0, ones.length);
        r.zero(50, 100);
        byte[] got = r.read(0, 200);
        for (int i = 0; i < 200; i++) {
            assertEquals(i >= 50 && i < 150 ? 0 : 1, got[i], "byte " + i);
        }
    }

    @Test
    void persistDoesNotThrow() {
        MappedRegion r = create(dir.resolve("pm.img"), SIZE);
        r.putLong(0, 1);
        r.persist(0, 8);
        r.persist(4000, 200); // crosses a page boundary
        r.persist(0, SIZE);
        r.persist(SIZE, 0);
    }

    @Test
    void reopenAfterCloseSeesTheData() throws Exception {
        Path f = dir.resolve("pm.img");
        MappedRegion r = MappedRegion.create(f, SIZE, MappedRegion.MapMode.FILE);
        byte[] data = pattern(777, 42);
        r.write(1234, data, 0, data.length);
        r.putLong(8, 0xCAFEBABEL);
        r.persist(0, SIZE);
        r.close();
        assertThrows(IllegalStateException.class, () -> r.getLong(8));

        MappedRegion again = open(f);
        assertEquals(SIZE, again.size());
        assertArrayEquals(data, again.read(1234, data.length));
        assertEquals(0xCAFEBABEL, again.getLong(8));

        // create() on an existing file of the same size keeps the content
        again.close();
        MappedRegion third = create(f, SIZE);
        assertEquals(0xCAFEBABEL, third.getLong(8));
        assertEquals(SIZE, Files.size(f));
    }

    @Test
    void createRefusesExistingFileOfDifferentSize() throws Exception {
        Path f = dir.resolve("pm.img");
        create(f, SIZE).close();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> create(f, SIZE * 2));
        assertTrue(e.getMessage().contains(String.valueOf(SIZE)), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(SIZE * 2)), e.getMessage());
        assertEquals(SIZE, Files.size(f), "existing image must not be resized");
        assertThrows(IllegalArgumentException.class, () -> create(f, SIZE / 2));
        assertEquals(SIZE, Files.size(f));
    }

    @Test
    void createExtendsAnEmptyExistingFile() throws Exception {
        Path f = dir.resolve("empty.img");
        Files.createFile(f);
        MappedRegion r = create(f, SIZE);
        assertEquals(SIZE, r.size());
        assertEquals(SIZE, Files.size(f));
    }

    @Test
    void invalidSizesAndEmptyFilesAreRefused() throws Exception {
        assertThrows(IllegalArgumentException.class, () -> create(dir.resolve("a"), 0));
        assertThrows(IllegalArgumentException.class, () -> create(dir.resolve("b"), -1));
        Path empty = dir.resolve("empty");
        Files.createFile(empty);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> open(empty));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
    }

    @Test
    void daxMappingOfOrdinaryFileIsRefusedMentioningMapSync() {
        Path f = dir.resolve("pm.img");
        create(f, SIZE).close();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> opened.add(MappedRegion.open(f, MappedRegion.MapMode.DAX)));
        assertNotNull(e.getMessage());
        assertTrue(e.getMessage().contains("MAP_SYNC"), e.getMessage());

        Path g = dir.resolve("pm2.img");
        IllegalArgumentException e2 = assertThrows(IllegalArgumentException.class,
                () -> opened.add(MappedRegion.create(g, SIZE, MappedRegion.MapMode.DAX)));
        assertTrue(e2.getMessage().contains("MAP_SYNC"), e2.getMessage());
    }

    /**
     * A sparse file larger than one 1 GiB mapping chunk: accesses straddling the chunk boundary are split
     * correctly, and aligned atomics next to it work.
     */
    @Test
    void accessesAcrossTheChunkBoundary() {
        long chunk = MappedRegion.CHUNK_SIZE;
        MappedRegion r = create(dir.resolve("big.img"), chunk + 8192);
        assertEquals(chunk + 8192, r.size());

        byte[] data = pattern(100, 9);
        r.write(chunk - 50, data, 0, data.length);
        assertArrayEquals(data, r.read(chunk - 50, 100));
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 50, 100), r.read(chunk, 50));

        r.putLong(chunk - 3, 0x0102030405060708L);
        assertEquals(0x0102030405060708L, r.getLong(chunk - 3));
        byte[] raw = r.read(chunk - 3, 8);
        assertEquals(0x0102030405060708L, ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).getLong());

        r.putInt(chunk - 2, 0x11223344);
        assertEquals(0x11223344, r.getInt(chunk - 2));

        ByteBuffer src = ByteBuffer.wrap(pattern(64, 1));
        r.write(chunk - 32, src);
        ByteBuffer dst = ByteBuffer.allocate(64);
        r.read(chunk - 32, dst);
        assertArrayEquals(pattern(64, 1), dst.array());

        r.putLongVolatile(chunk - 8, 1);
        r.putLongVolatile(chunk, 2);
        assertTrue(r.compareAndSetLong(chunk, 2, 3));
        assertEquals(1, r.getAndAddLong(chunk - 8, 1));
        assertEquals(2, r.getLong(chunk - 8));
        assertEquals(3, r.getLong(chunk));

        r.persist(chunk - 4096, 8192);
        r.zero(chunk - 16, 32);
        assertArrayEquals(new byte[32], r.read(chunk - 16, 32));
    }

    @Test
    void shouldPersistScatteredRangesInOneCallInAnyOrder() {
        Path file = dir.resolve("ranges.img");
        MappedRegion r = create(file, SIZE);
        long[] starts = {8192, 64, 40960};
        long[] ends = {8192 + 128, 64 + 64, 40960 + 4096};
        for (int i = 0; i < starts.length; i++) {
            r.write(starts[i], pattern((int) (ends[i] - starts[i]), i + 1), 0, (int) (ends[i] - starts[i]));
        }
        r.persistRanges(starts, ends, starts.length); // unsorted: the covering span is taken from all of them
        r.persistRanges(starts, ends, 0);
        r.close();
        MappedRegion again = open(file);
        for (int i = 0; i < starts.length; i++) {
            assertArrayEquals(pattern((int) (ends[i] - starts[i]), i + 1), again.read(starts[i],
                    (int) (ends[i] - starts[i])), "range " + i);
        }
    }

    @Test
    void shouldRefuseRangesItCannotPersist() {
        MappedRegion r = create(dir.resolve("bad-ranges.img"), SIZE);
        IllegalArgumentException count = assertThrows(IllegalArgumentException.class,
                () -> r.persistRanges(new long[] {0, 64}, new long[] {64, 128}, 3));
        assertTrue(count.getMessage().contains("range count 3 outside [0, 2]"), count.getMessage());
        IllegalArgumentException backwards = assertThrows(IllegalArgumentException.class,
                () -> r.persistRanges(new long[] {0, 640}, new long[] {64, 128}, 2));
        assertTrue(backwards.getMessage().contains("range 1 ends at 128 before its start 640"),
                backwards.getMessage());
        assertThrows(IndexOutOfBoundsException.class,
                () -> r.persistRanges(new long[] {0, SIZE - 64}, new long[] {64, SIZE + 64}, 2));
    }
}
