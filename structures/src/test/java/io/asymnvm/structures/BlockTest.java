package io.asymnvm.structures;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Dirty-range tracking: every changed byte is written, ranges stay sorted and disjoint, few bytes extra. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BlockTest {

    @Test
    void shouldFlushExactlyTheChangedBytesAndTheirSmallGaps() {
        long seed = Long.getLong("asymnvm.seed", 7);
        Random rnd = new Random(seed);
        for (int round = 0; round < 500; round++) {
            MemoryTransaction tx = new MemoryTransaction(8192);
            Block b = new Block(4096, new byte[4096]);
            boolean[] changed = new boolean[4096];
            int edits = 1 + rnd.nextInt(20);
            for (int e = 0; e < edits; e++) {
                int from = rnd.nextInt(4096);
                int length = 1 + rnd.nextInt(Math.min(64, 4096 - from));
                byte[] data = new byte[length];
                rnd.nextBytes(data);
                b.putBytes(from, data, 0, length);
                Arrays.fill(changed, from, from + length, true);
            }
            int dirty = b.dirtyBytes();
            b.flush(tx);
            String ctx = "seed=" + seed + " round " + round;
            long last = -1;
            int written = 0;
            for (long[] w : tx.writes) {
                assertTrue(w[0] > last, ctx + ": ranges sorted and disjoint");
                last = w[0] + w[1] - 1;
                written += (int) w[1];
            }
            assertEquals(dirty, written, ctx);
            byte[] image = Arrays.copyOfRange(tx.memory, 4096, 8192);
            for (int i = 0; i < 4096; i++) {
                if (changed[i]) {
                    assertEquals(b.bytes[i], image[i], ctx + " byte " + i + " not written");
                }
            }
            assertTrue(!b.isDirty(), ctx);
        }
    }

    @Test
    void shouldMergeNearbyRangesAndCollapseWhenThereAreTooMany() {
        MemoryTransaction tx = new MemoryTransaction(8192);
        Block b = new Block(0, new byte[4096]);
        b.markDirty(0, 8);
        b.markDirty(8 + Block.MERGE_GAP, 40);
        assertEquals(40, b.dirtyBytes(), "ranges within the gap merge");
        for (int i = 0; i < 20; i++) {
            b.markDirty(200 * (i + 1), 200 * (i + 1) + 4);
        }
        b.flush(tx);
        assertTrue(tx.writes.size() <= 8, tx.writes.size() + " writes: ranges beyond 8 collapse into one");
        long[] first = tx.writes.get(0);
        long[] last = tx.writes.get(tx.writes.size() - 1);
        assertEquals(0, first[0]);
        assertEquals(4004, last[0] + last[1]);
    }

    /**
     * A block read without a copy shares the transaction's page: every way of changing it (the typed puts, raw
     * bytes, a node's slot shifts and its compaction) must copy it first, so the shared page never sees a change
     * that was not written through the transaction. Seeded random node edits on a shared block, checked against the
     * untouched original after each one.
     */
    @Test
    void shouldNeverChangeTheSharedPageOfABlockReadWithoutACopy() {
        long seed = Long.getLong("asymnvm.seed", 11);
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            Block owned = new Block(0, new byte[4096]);
            NodePage built = NodePage.init(owned, io.asymnvm.structures.layout.NodePageLayout.KIND_INNER, 0);
            int records = 2 + rnd.nextInt(30);
            for (int i = 0; i < records; i++) {
                built.append(randomRecord(rnd));
            }
            built.remove(rnd.nextInt(records - 1)); // not the last one appended: leaves garbage to compact
            byte[] page = owned.bytes.clone();
            byte[] original = page.clone();
            Block shared = Block.shared(0, page);
            NodePage node = new NodePage(shared);
            switch (rnd.nextInt(5)) {
                case 0 -> node.remove(rnd.nextInt(node.count()));
                case 1 -> node.compact();
                case 2 -> shared.putLong(8 * rnd.nextInt(512), rnd.nextLong());
                case 3 -> shared.putShort(2 * rnd.nextInt(2048), rnd.nextInt(65536));
                default -> node.insert(rnd.nextInt(node.count() + 1), randomRecord(rnd));
            }
            String ctx = "seed=" + seed + " round " + round;
            assertTrue(Arrays.equals(original, page), ctx + ": the shared page was changed in place");
            assertTrue(shared.bytes != page, ctx + ": the changed block must hold its own copy");
            assertTrue(shared.isDirty(), ctx);
        }
    }

    private static byte[] randomRecord(Random rnd) {
        byte[] key = new byte[1 + rnd.nextInt(40)];
        rnd.nextBytes(key);
        return Records.inner(key, rnd.nextLong());
    }

    @Test
    void shouldReadASharedBlockWithoutCopyingIt() {
        byte[] page = new byte[4096];
        page[17] = 42;
        Block shared = Block.shared(0, page);
        assertEquals(42, shared.getByte(17));
        assertTrue(shared.bytes == page, "reads must not copy");
        assertTrue(!shared.isDirty());
    }

    @Test
    void shouldReadASliceInPlaceAndCopyOnlyItsOwnBytesAtTheFirstChange() {
        byte[] page = new byte[4096];
        for (int i = 0; i < page.length; i++) {
            page[i] = (byte) i;
        }
        byte[] before = page.clone();
        Block slice = Block.sharedSlice(8192 + 512, page, 512, 256);
        assertEquals(256, slice.length());
        assertEquals(page[512 + 17], slice.getByte(17), "offsets are the block's, not the page's");
        assertEquals(java.nio.ByteBuffer.wrap(page, 512 + 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong(),
                slice.getLong(8));
        assertTrue(slice.bytes == page, "reads must not copy");

        slice.putLong(16, 0x1122334455667788L);
        assertTrue(Arrays.equals(before, page), "a change never reaches the shared page");
        assertEquals(256, slice.bytes.length, "only the block's own bytes are copied");
        assertEquals(0x1122334455667788L, slice.getLong(16));
        assertEquals(page[512 + 40], slice.getByte(40), "the rest of the copy is the slice's bytes");

        MemoryTransaction tx = new MemoryTransaction(16384);
        slice.flush(tx);
        assertEquals(1, tx.writes.size());
        assertEquals(8192 + 512 + 16, tx.writes.get(0)[0], "written at the block's address plus the offset");
        assertEquals(0x1122334455667788L, tx.readLong(8192 + 512 + 16));
    }

    @Test
    void shouldRefuseASliceOutsideItsPage() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> Block.sharedSlice(0, new byte[4096], 4000, 256));
    }
}
