package io.asymnvm.recovery.semantic;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class SemanticLogReaderTest {
    private static final int CAPACITY = 4096;

    /** A semantic ring in a byte array, written the way a frontend appends; records the fetches made. */
    private static final class Ring implements SemanticLogReader.Fetcher {
        final byte[] bytes = new byte[CAPACITY];
        final List<long[]> fetches = new ArrayList<>();
        long tail;

        Ring(long start) {
            tail = start;
        }

        long append(long txId, int argsLength) {
            int aligned = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argsLength);
            int inRing = (int) Math.floorMod(tail, (long) CAPACITY);
            if (inRing + aligned > CAPACITY) {
                byte[] pad = LogRecordLayout.padding(tail, CAPACITY - inRing);
                System.arraycopy(pad, 0, bytes, inRing, pad.length);
                tail += CAPACITY - inRing;
                inRing = 0;
            }
            long at = tail;
            byte[] r = SemanticRecordLayout.encode(at, txId, 1000 + txId, args(txId, argsLength), argsLength);
            System.arraycopy(r, 0, bytes, inRing, r.length);
            tail += r.length;
            return at;
        }

        @Override
        public byte[] read(long offset, int length) {
            fetches.add(new long[] {offset, length});
            assertTrue(offset >= 0 && offset + length <= CAPACITY, "fetch [" + offset + ", +" + length + ") in ring");
            return java.util.Arrays.copyOfRange(bytes, (int) offset, (int) offset + length);
        }
    }

    private static byte[] args(long txId, int length) {
        byte[] a = new byte[length];
        new Random(txId).nextBytes(a);
        return a;
    }

    @Test
    void shouldReturnEveryRecordBetweenHeadAndTailInOrder() {
        Ring ring = new Ring(0);
        for (long tx = 1; tx <= 5; tx++) {
            ring.append(tx, (int) tx * 20);
        }
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, 0, ring.tail);
        assertEquals(5, records.size());
        long expectedPosition = 0;
        for (int i = 0; i < 5; i++) {
            SemanticLogReader.Record r = records.get(i);
            long tx = i + 1;
            assertEquals(expectedPosition, r.position());
            assertEquals(tx, r.txId());
            assertEquals(1000 + tx, r.methodHash());
            assertArrayEquals(args(tx, (int) tx * 20), r.arguments());
            assertEquals(LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + (int) tx * 20),
                    r.raw().length, "raw holds the padded record");
            assertFalse(r.isPadding());
            expectedPosition += r.raw().length;
        }
    }

    @Test
    void shouldReturnPaddingAndRecordsAcrossTheWrapWithoutFetchingAcrossTheEnd() {
        Ring ring = new Ring(7L * CAPACITY + CAPACITY - 320);
        long head = ring.tail;
        for (long tx = 41; tx <= 46; tx++) {
            ring.append(tx, 60);
        }
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, head, ring.tail);
        assertEquals(7, records.size(), "six records and one padding");
        assertEquals(41, records.get(0).txId());
        assertEquals(42, records.get(1).txId());
        SemanticLogReader.Record pad = records.get(2);
        assertTrue(pad.isPadding());
        assertEquals(LogRecordLayout.ALIGNMENT, pad.raw().length);
        assertEquals(8L * CAPACITY, records.get(3).position());
        assertEquals(46, records.get(6).txId());
        assertEquals(2, ring.fetches.size(), "one fetch to the end of the ring, one from its start");
    }

    @Test
    void shouldStopAtTheFirstTornRecord() {
        Ring ring = new Ring(0);
        List<Long> positions = new ArrayList<>();
        for (long tx = 1; tx <= 6; tx++) {
            positions.add(ring.append(tx, 30));
        }
        ring.bytes[(int) (positions.get(3) + 50)] ^= 0x11;
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, 0, ring.tail);
        assertEquals(3, records.size(), "records after the torn one are treated as never written");
        assertEquals(3, records.get(2).txId());
    }

    @Test
    void shouldStopAtARecordCutByTheTail() {
        Ring ring = new Ring(0);
        ring.append(1, 10);
        long second = ring.append(2, 200);
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, 0, second + 64);
        assertEquals(1, records.size(), "the bytes beyond the tail are not fetched, so the cut record is invalid");
    }

    @Test
    void shouldStopAtAStaleRecordOfAnEarlierLap() {
        Ring ring = new Ring(0);
        for (long tx = 1; tx <= 10; tx++) {
            ring.append(tx, 0);
        }
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, CAPACITY,
                CAPACITY + 640);
        assertTrue(records.isEmpty(), "lap-zero records do not validate at lap-one positions");
    }

    @Test
    void shouldReadNothingForAnEmptyRange() {
        Ring ring = new Ring(0);
        ring.append(1, 0);
        assertTrue(SemanticLogReader.read(ring, CAPACITY, 64, 64).isEmpty());
        assertTrue(ring.fetches.isEmpty());
    }

    @Test
    void shouldReadAFullRing() {
        Ring ring = new Ring(3L * CAPACITY);
        long head = ring.tail;
        for (long tx = 1; tx <= CAPACITY / 64; tx++) {
            ring.append(tx, 0);
        }
        List<SemanticLogReader.Record> records = SemanticLogReader.read(ring, CAPACITY, head, ring.tail);
        assertEquals(CAPACITY / 64, records.size());
    }

    @Test
    void shouldRejectAnInvalidRangeNamingItAndTheCapacity() {
        Ring ring = new Ring(0);
        IllegalArgumentException backwards = assertThrows(IllegalArgumentException.class,
                () -> SemanticLogReader.read(ring, CAPACITY, 640, 128));
        assertTrue(backwards.getMessage().contains("[640, 128)"), backwards.getMessage());
        assertTrue(backwards.getMessage().contains(String.valueOf(CAPACITY)), backwards.getMessage());
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> SemanticLogReader.read(ring, CAPACITY, 0, CAPACITY + 64));
        assertTrue(tooLong.getMessage().contains("[0, " + (CAPACITY + 64) + ")"), tooLong.getMessage());
    }

    @Test
    void shouldReadRandomLogsFromRandomHeads() {
        long seed = 0x5EED_0004L;
        Random rnd = new Random(seed);
        for (int round = 0; round < 50; round++) {
            Ring ring = new Ring(rnd.nextInt(100) * 64L);
            long head = ring.tail;
            List<Long> txs = new ArrayList<>();
            long tx = 1 + rnd.nextInt(500);
            while (true) {
                int argsLength = rnd.nextInt(200);
                int aligned = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argsLength);
                if (ring.tail - head + aligned + 256 > CAPACITY) {
                    break;
                }
                ring.append(tx, argsLength);
                txs.add(tx++);
            }
            List<Long> read = new ArrayList<>();
            for (SemanticLogReader.Record r : SemanticLogReader.read(ring, CAPACITY, head, ring.tail)) {
                if (!r.isPadding()) {
                    read.add(r.txId());
                }
            }
            assertEquals(txs, read, "seed " + seed + " round " + round);
        }
    }
}
