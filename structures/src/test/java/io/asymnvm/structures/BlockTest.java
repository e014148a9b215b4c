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
}
