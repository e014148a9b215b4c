package io.asymnvm.recovery.log;

import io.asymnvm.core.CorruptRecordException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static io.asymnvm.recovery.log.RingFixture.CAPACITY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class RingScannerTest {
    @TempDir
    Path dir;

    private RingFixture ring;

    @BeforeEach
    void setUp() {
        ring = new RingFixture(dir);
    }

    @AfterEach
    void tearDown() {
        ring.close();
    }

    private List<Long> appendRecords(long firstTx, int count, int argsLength) {
        List<Long> positions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            positions.add(ring.append(firstTx + i, argsLength));
        }
        return positions;
    }

    @Test
    void shouldFindEmptyTailAtHeadOfUnwrittenRing() {
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, 0, null);
        assertEquals(0, s.head());
        assertEquals(0, s.tail());
        assertEquals(0, s.records());
        assertNull(s.lastRecord());
    }

    @Test
    void shouldFindValidTailAfterLastRecordAndVisitInOrder() {
        List<Long> positions = appendRecords(1, 10, 50);
        List<Long> visited = new ArrayList<>();
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, ring.tail,
                e -> visited.add(SemanticRecordLayout.txId(e.bytes())));
        assertEquals(ring.tail, s.tail());
        assertEquals(10, s.records());
        assertEquals(10, SemanticRecordLayout.txId(s.lastRecord()));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L), visited);
        assertEquals(positions.get(9) + 128, s.tail());
    }

    @Test
    void shouldScanFromAHeadInTheMiddle() {
        List<Long> positions = appendRecords(1, 6, 10);
        RingScanner.Scan s = RingScanner.scan(ring.reader, positions.get(3), ring.tail, null);
        assertEquals(3, s.records());
        assertEquals(6, SemanticRecordLayout.txId(s.lastRecord()));
        assertEquals(ring.tail, s.tail());
    }

    @Test
    void shouldTruncateTornTailBeyondTheDurableWatermark() {
        List<Long> positions = appendRecords(1, 5, 100);
        long last = positions.get(4);
        ring.flip(last, 90);
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, last, null);
        assertEquals(last, s.tail(), "torn last record truncated at its position");
        assertEquals(4, s.records());
        assertEquals(4, SemanticRecordLayout.txId(s.lastRecord()));
    }

    @Test
    void shouldTruncateTornHeaderOfTailRecord() {
        List<Long> positions = appendRecords(1, 3, 0);
        long last = positions.get(2);
        ring.putInt(last, LogRecordLayout.LENGTH_OFFSET, 1 << 20);
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, last, null);
        assertEquals(last, s.tail());
        assertEquals(2, s.records());
    }

    @Test
    void shouldThrowNamingRingOffsetAndCrcsForCorruptionBeforeTheWatermark() {
        List<Long> positions = appendRecords(1, 5, 100);
        long middle = positions.get(2);
        int stored = ring.storedCrc(middle);
        ring.flip(middle, 60);
        RingReader.Entry bad = ring.reader.read(middle);
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> RingScanner.scan(ring.reader, 0, ring.tail, null));
        assertEquals(ErrorCode.CORRUPT_RECORD, e.errorCode());
        assertEquals(RingFixture.NAME, e.where());
        assertEquals(ring.reader.offsetOf(middle), e.offset());
        String m = e.getMessage();
        assertTrue(m.contains(RingFixture.NAME), m);
        assertTrue(m.contains("offset " + ring.reader.offsetOf(middle)), m);
        assertTrue(m.contains("crc32c"), m);
        assertTrue(m.contains("expected 0x" + Integer.toHexString(stored)), m);
        assertTrue(m.contains("actual 0x" + Long.toHexString(bad.actual())), m);
        assertTrue(m.contains("durable watermark " + ring.tail), m);
    }

    @Test
    void shouldTreatRecordExactlyAtTheWatermarkAsTornTail() {
        List<Long> positions = appendRecords(1, 4, 20);
        ring.flip(positions.get(2), 50);
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, positions.get(2), null);
        assertEquals(positions.get(2), s.tail());
        assertEquals(2, s.records());
        assertThrows(CorruptRecordException.class,
                () -> RingScanner.scan(ring.reader, 0, positions.get(2) + 1, null));
    }

    @Test
    void shouldThrowWhenDurableRecordsAreMissing() {
        appendRecords(1, 2, 20);
        long watermark = ring.tail + 256;
        CorruptRecordException e = assertThrows(CorruptRecordException.class,
                () -> RingScanner.scan(ring.reader, 0, watermark, null));
        assertEquals(ring.reader.offsetOf(ring.tail), e.offset());
        assertTrue(e.getMessage().contains("record position"), e.getMessage());
    }

    @Test
    void shouldScanAcrossTheWrapPadding() {
        ring.tail = 3 * CAPACITY + CAPACITY - 5 * 128 - 64;
        long head = ring.tail;
        List<Long> positions = appendRecords(100, 12, 80);
        assertTrue(ring.tail > 4 * CAPACITY, "records continue on the next lap");
        assertEquals(RingReader.Kind.PADDING, ring.reader.read(4 * CAPACITY - 64).kind(), "64 bytes of padding");
        List<Long> txs = new ArrayList<>();
        RingScanner.Scan s = RingScanner.scan(ring.reader, head, ring.tail,
                e -> txs.add(SemanticRecordLayout.txId(e.bytes())));
        assertEquals(12, s.records());
        assertEquals(ring.tail, s.tail());
        assertEquals(111, SemanticRecordLayout.txId(s.lastRecord()));
        assertEquals(100, txs.get(0));
        assertEquals(positions.get(5), 4 * CAPACITY, "first record of the new lap starts at its beginning");
    }

    @Test
    void shouldStopAtStaleRecordOfEarlierLapWithoutError() {
        appendRecords(1, 40, 20);
        long lapTwo = ring.tail;
        assertTrue(lapTwo < CAPACITY);
        ring.pad(lapTwo);
        long head = ring.tail;
        appendRecords(41, 3, 20);
        RingScanner.Scan s = RingScanner.scan(ring.reader, head, ring.tail, null);
        assertEquals(3, s.records());
        assertEquals(ring.tail, s.tail(), "lap-one record after the tail is stale, not corrupt");
    }

    @Test
    void shouldStopAfterOneFullLap() {
        for (long tx = 1; tx <= CAPACITY / 64; tx++) {
            ring.append(tx, 0);
        }
        RingScanner.Scan s = RingScanner.scan(ring.reader, 0, 0, null);
        assertEquals(CAPACITY / 64, s.records());
        assertEquals(CAPACITY, s.tail());
    }

    @Test
    void shouldFindTailOfRandomLogsAndTellTornTailFromCorruption() {
        long seed = 0x5EED_0002L;
        Random rnd = new Random(seed);
        for (int round = 0; round < 30; round++) {
            String ctx = "seed " + seed + " round " + round;
            ring.region.zero(RingFixture.BASE, CAPACITY);
            ring.tail = rnd.nextInt(200) * 64L;
            long head = ring.tail;
            List<Long> positions = new ArrayList<>();
            long tx = 1 + rnd.nextInt(1000);
            long firstTx = tx;
            while (true) {
                int argsLength = rnd.nextInt(300);
                long before = ring.tail;
                int aligned = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argsLength);
                long inRing = Math.floorMod(before, CAPACITY);
                long start = inRing + aligned > CAPACITY ? before + CAPACITY - inRing : before;
                if (start + aligned - head > CAPACITY - 64 || positions.size() >= 2 + rnd.nextInt(30)) {
                    break;
                }
                positions.add(ring.append(tx++, argsLength));
            }
            RingScanner.Scan clean = RingScanner.scan(ring.reader, head, ring.tail, null);
            assertEquals(positions.size(), clean.records(), ctx);
            assertEquals(ring.tail, clean.tail(), ctx);
            assertEquals(tx - 1, SemanticRecordLayout.txId(clean.lastRecord()), ctx);

            int victim = rnd.nextInt(positions.size());
            long at = positions.get(victim);
            ring.flip(at, 4 + rnd.nextInt(SemanticRecordLayout.HEADER_LENGTH - 4));
            if (victim == positions.size() - 1 || rnd.nextBoolean()) {
                RingScanner.Scan torn = RingScanner.scan(ring.reader, head, at, null);
                assertEquals(at, torn.tail(), ctx + " victim " + victim);
                assertEquals(victim, torn.records(), ctx);
                if (victim > 0) {
                    assertEquals(firstTx + victim - 1, SemanticRecordLayout.txId(torn.lastRecord()), ctx);
                }
            } else {
                CorruptRecordException e = assertThrows(CorruptRecordException.class,
                        () -> RingScanner.scan(ring.reader, head, ring.tail, null), ctx + " victim " + victim);
                assertEquals(ring.reader.offsetOf(at), e.offset(), ctx);
            }
        }
    }
}
