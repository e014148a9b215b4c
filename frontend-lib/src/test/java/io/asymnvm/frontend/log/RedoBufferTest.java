package io.asymnvm.frontend.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.frontend.log.RedoBuffer.Write;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Coalescing of repeated writes within a batch: the sealed batch, applied in order as the replayer applies it, leaves
 * the heap exactly as every write applied in order would, and keeps every transaction's commit entry in order.
 */
@Timeout(30)
class RedoBufferTest {
    private static final int HEAP = 512;

    /** What replay of a sealed batch does: its writes in order over {@code heap}; returns the commit ids seen. */
    private static List<Long> replay(byte[] batch, byte[] heap) {
        int length = LogRecordLayout.wrap(batch).getInt(LogRecordLayout.LENGTH_OFFSET);
        assertEquals(LogRecordLayout.crc(batch, 0, length), LogRecordLayout.wrap(batch).getInt(
                LogRecordLayout.CRC_OFFSET), "the sealed batch's CRC covers its coalesced bytes");
        List<Long> commits = new ArrayList<>();
        RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
            @Override
            public void write(long heapOffset, byte[] b, int dataOffset, int length) {
                System.arraycopy(b, dataOffset, heap, (int) heapOffset, length);
            }

            @Override
            public void commit(long txId) {
                commits.add(txId);
            }
        });
        return commits;
    }

    private static Write write(long address, int length, int seed) {
        byte[] data = new byte[length];
        new Random(seed).nextBytes(data);
        return new Write(address, data);
    }

    @Test
    void shouldLogARepeatedWriteOnceWithTheLastBytesAndKeepEveryCommit() {
        RedoBuffer redo = new RedoBuffer(1 << 16);
        Write first = write(64, 100, 1);
        Write other = write(256, 8, 2);
        Write last = write(64, 100, 3);
        redo.append(1, List.of(first, other), 10);
        redo.append(2, List.of(last), 20);
        redo.append(3, List.of(write(64, 100, 4), write(64, 100, 5)), 30);

        int expected = RedoBatchLayout.HEADER_LENGTH + RedoBatchLayout.writeEntryLength(100)
                + RedoBatchLayout.writeEntryLength(8) + 3 * RedoBatchLayout.commitEntryLength();
        assertEquals(expected, redo.bytes(), "one entry for address 64");
        assertEquals(3, redo.coalescedWrites());
        assertEquals(3L * RedoBatchLayout.writeEntryLength(100), redo.coalescedBytes());

        byte[] batch = redo.seal(0);
        byte[] heap = new byte[HEAP];
        assertEquals(List.of(1L, 2L, 3L), replay(batch, heap));
        assertEquals(1, RedoBatchLayout.firstTxId(batch));
        assertEquals(3, RedoBatchLayout.lastTxId(batch));
        byte[] want = new byte[HEAP];
        for (Write w : List.of(first, other, last, write(64, 100, 4), write(64, 100, 5))) {
            System.arraycopy(w.data(), 0, want, (int) w.address(), w.data().length);
        }
        assertArrayEquals(want, heap);
    }

    @Test
    void shouldNotCoalesceAcrossALaterOverlappingWrite() {
        RedoBuffer redo = new RedoBuffer(1 << 16);
        redo.append(1, List.of(write(64, 16, 1)), 10);
        redo.append(2, List.of(write(72, 16, 2)), 20); // overlaps the second half of the first
        Write again = write(64, 16, 3);
        redo.append(3, List.of(again), 30);
        assertEquals(0, redo.coalescedWrites(), "the write at 72 lies between: appended, not coalesced");

        byte[] heap = new byte[HEAP];
        replay(redo.seal(0), heap);
        byte[] want = new byte[HEAP];
        System.arraycopy(write(64, 16, 1).data(), 0, want, 64, 16);
        System.arraycopy(write(72, 16, 2).data(), 0, want, 72, 16);
        System.arraycopy(again.data(), 0, want, 64, 16);
        assertArrayEquals(want, heap);
    }

    @Test
    void shouldNotCoalesceADifferentLengthOrIntoTheNextBatch() {
        RedoBuffer redo = new RedoBuffer(1 << 16);
        redo.append(1, List.of(write(64, 16, 1)), 10);
        redo.append(2, List.of(write(64, 8, 2)), 20);
        assertEquals(0, redo.coalescedWrites());
        redo.seal(0);
        redo.append(3, List.of(write(64, 8, 3)), 30);
        assertEquals(0, redo.coalescedWrites(), "a new batch starts with no entries to coalesce into");
        assertEquals(RedoBatchLayout.HEADER_LENGTH + RedoBatchLayout.writeEntryLength(8)
                + RedoBatchLayout.commitEntryLength(), redo.bytes());
    }

    @Test
    void randomBatchesShouldReplayToTheSameHeapAsEveryWriteInOrder() {
        long seed = new Random().nextLong();
        Random r = new Random(seed);
        long coalesced = 0;
        for (int round = 0; round < 200; round++) {
            RedoBuffer redo = new RedoBuffer(1 << 20);
            byte[] want = new byte[HEAP];
            List<Long> ids = new ArrayList<>();
            int txs = 1 + r.nextInt(40);
            for (int t = 1; t <= txs; t++) {
                List<Write> writes = new ArrayList<>();
                int n = r.nextInt(5); // a transaction may also write nothing
                for (int i = 0; i < n; i++) {
                    // few addresses and lengths, so that repeats and overlaps are frequent
                    Write w = write(8L * r.nextInt(16), 8 * (1 + r.nextInt(3)), r.nextInt());
                    writes.add(w);
                    System.arraycopy(w.data(), 0, want, (int) w.address(), w.data().length);
                }
                redo.append(t, writes, t * 10L);
                ids.add((long) t);
            }
            byte[] batch = redo.seal(4096);
            byte[] heap = new byte[HEAP];
            assertEquals(ids, replay(batch, heap), "seed " + seed + " round " + round);
            assertArrayEquals(want, heap, "seed " + seed + " round " + round);
            assertEquals(txs, RedoBatchLayout.lastTxId(batch), "seed " + seed);
            coalesced += redo.coalescedWrites();
        }
        assertTrue(coalesced > 0, "the random batches exercised coalescing (seed " + seed + ")");
    }
}
