package io.asymnvm.recovery.log;

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
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class RingReaderTest {
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

    @Test
    void shouldReadValidRecordWithUnpaddedBytesAndNextPosition() {
        byte[] written = ring.put(128, 7, 30);
        RingReader.Entry e = ring.reader.read(128);
        assertEquals(RingReader.Kind.VALID, e.kind(), () -> String.valueOf(e));
        assertEquals(128, e.position());
        assertEquals(128 + 128, e.next(), "40 + 30 bytes occupy two 64-byte units");
        assertEquals(SemanticRecordLayout.HEADER_LENGTH + 30, e.bytes().length);
        assertArrayEquals(java.util.Arrays.copyOf(written, e.bytes().length), e.bytes());
        assertEquals(7, SemanticRecordLayout.txId(e.bytes()));
        assertArrayEquals(RingFixture.args(30, 7), SemanticRecordLayout.arguments(e.bytes()));
        assertNull(e.reason());
    }

    @Test
    void shouldReadRecordThatFitsInItsHeaderLine() {
        ring.put(0, 1, 0);
        RingReader.Entry e = ring.reader.read(0);
        assertEquals(RingReader.Kind.VALID, e.kind(), () -> String.valueOf(e));
        assertEquals(SemanticRecordLayout.HEADER_LENGTH, e.bytes().length);
        assertEquals(64, e.next());
    }

    @Test
    void shouldReadRecordOfLaterLapAtItsLogicalPosition() {
        long position = 5 * CAPACITY + 256;
        ring.put(position, 99, 100);
        RingReader.Entry e = ring.reader.read(position);
        assertEquals(RingReader.Kind.VALID, e.kind(), () -> String.valueOf(e));
        assertEquals(position + 192, e.next());
        assertEquals(RingFixture.BASE + 256, ring.reader.offsetOf(position));
    }

    @Test
    void shouldReportNeverWrittenSpaceAsInvalidPositionZero() {
        // the position is checked first, so never-written (or earlier-lap) space is reported quietly as such
        RingReader.Entry e = ring.reader.read(640);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("record position", e.reason());
        assertEquals(0, e.actual());
        assertEquals(640, e.next(), "an invalid entry does not advance");
    }

    @Test
    void shouldReportPaddingWithStartOfNextLap() {
        long position = 2 * CAPACITY + CAPACITY - 192;
        ring.pad(position);
        RingReader.Entry e = ring.reader.read(position);
        assertEquals(RingReader.Kind.PADDING, e.kind(), () -> String.valueOf(e));
        assertEquals(3 * CAPACITY, e.next());
        assertNull(e.bytes());
    }

    @Test
    void shouldRejectPaddingWhoseSpanDoesNotReachTheEndOfTheLap() {
        byte[] p = LogRecordLayout.padding(1024, 128);
        ring.region.write(ring.reader.offsetOf(1024), p, 0, p.length);
        RingReader.Entry e = ring.reader.read(1024);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("padding span", e.reason());
        assertEquals(CAPACITY - 1024, e.expected());
        assertEquals(128, e.actual());
    }

    @Test
    void shouldRejectPaddingWithBrokenCrc() {
        ring.pad(CAPACITY - 64);
        ring.flip(CAPACITY - 64, 12);
        RingReader.Entry e = ring.reader.read(CAPACITY - 64);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("padding crc32c", e.reason());
    }

    @Test
    void shouldRejectPaddingWhoseLengthRunsPastItsHeaderWithoutThrowing() {
        long position = CAPACITY - 256;
        ring.pad(position);
        ring.putInt(position, LogRecordLayout.LENGTH_OFFSET, 200);
        RingReader.Entry e = ring.reader.read(position);
        assertEquals(RingReader.Kind.INVALID, e.kind(), () -> String.valueOf(e));
    }

    @Test
    void shouldRejectRecordOfEarlierLapAsPositionMismatch() {
        ring.put(320, 3, 10);
        long later = 320 + CAPACITY;
        RingReader.Entry e = ring.reader.read(later);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("record position", e.reason());
        assertEquals(later, e.expected());
        assertEquals(320, e.actual());
    }

    @Test
    void shouldRejectFlippedBodyByteNamingStoredAndComputedCrc() {
        ring.put(64, 4, 200);
        int stored = ring.storedCrc(64);
        ring.flip(64, 150);
        RingReader.Entry e = ring.reader.read(64);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("crc32c", e.reason());
        assertEquals(Integer.toUnsignedLong(stored), e.expected());
        assertTrue(e.actual() != e.expected(), "computed CRC differs from the stored one");
    }

    @Test
    void shouldRejectRecordOfOtherType() {
        ring.put(0, 1, 8);
        RingReader redoReader = new RingReader(ring.region, RingFixture.BASE, CAPACITY,
                LogRecordLayout.TYPE_REDO_BATCH, "redo");
        RingReader.Entry e = redoReader.read(0);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("record type", e.reason());
        assertEquals(LogRecordLayout.TYPE_REDO_BATCH, e.expected());
        assertEquals(LogRecordLayout.TYPE_SEMANTIC, e.actual());
    }

    @Test
    void shouldRejectLengthRunningPastTheEndOfTheRing() {
        long position = CAPACITY - 64;
        ring.put(position, 1, 8);
        ring.putInt(position, LogRecordLayout.LENGTH_OFFSET, 65);
        RingReader.Entry e = ring.reader.read(position);
        assertEquals(RingReader.Kind.INVALID, e.kind());
        assertEquals("record length", e.reason());
        assertEquals(64, e.expected());
        assertEquals(65, e.actual());
    }

    @Test
    void shouldRejectLengthShorterThanTheCommonHeader() {
        ring.put(0, 1, 8);
        ring.putInt(0, LogRecordLayout.LENGTH_OFFSET, LogRecordLayout.COMMON_HEADER_LENGTH - 1);
        assertEquals("record length", ring.reader.read(0).reason());
    }

    @Test
    void shouldRejectACrcValidRecordShorterThanItsTypesHeader() {
        byte[] r = SemanticRecordLayout.encode(0, 1, 2, new byte[0], 0);
        java.nio.ByteBuffer.wrap(r).order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putInt(LogRecordLayout.LENGTH_OFFSET, SemanticRecordLayout.HEADER_LENGTH - 8);
        LogRecordLayout.seal(r);
        ring.region.write(ring.reader.offsetOf(0), r, 0, r.length);
        RingReader.Entry e = ring.reader.read(0);
        assertEquals("record length", e.reason(), String.valueOf(e));
        assertEquals(SemanticRecordLayout.HEADER_LENGTH, e.expected());
        assertEquals(SemanticRecordLayout.HEADER_LENGTH - 8, e.actual());
    }

    @Test
    void shouldRejectGarbageLengthNearIntMaxWithoutReadingIt() {
        ring.put(0, 1, 8);
        for (int garbage : new int[] {Integer.MAX_VALUE, Integer.MAX_VALUE - 40, Integer.MIN_VALUE, -1}) {
            ring.putInt(0, LogRecordLayout.LENGTH_OFFSET, garbage);
            RingReader.Entry e = ring.reader.read(0);
            assertEquals(RingReader.Kind.INVALID, e.kind(), "length " + garbage);
            assertEquals("record length", e.reason(), "length " + garbage);
        }
    }

    @Test
    void shouldMapLogicalPositionsOntoTheRingModuloCapacity() {
        assertEquals(RingFixture.BASE, ring.reader.offsetOf(0));
        assertEquals(RingFixture.BASE + 64, ring.reader.offsetOf(3 * CAPACITY + 64));
        assertEquals(CAPACITY, ring.reader.capacity());
        assertEquals(RingFixture.NAME, ring.reader.name());
    }

    @Test
    void shouldRefuseCapacityThatIsNotAMultipleOfTheAlignment() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RingReader(ring.region, 0, 1000, LogRecordLayout.TYPE_SEMANTIC, "x"));
        assertTrue(e.getMessage().contains("1000") && e.getMessage().contains("64"), e.getMessage());
        assertThrows(IllegalArgumentException.class,
                () -> new RingReader(ring.region, 0, 0, LogRecordLayout.TYPE_SEMANTIC, "x"));
    }

    @Test
    void shouldReadEveryRecordOfRandomLapsInOrder() {
        long seed = 0x5EED_0001L;
        Random rnd = new Random(seed);
        for (int round = 0; round < 20; round++) {
            ring.tail = rnd.nextInt(1000) * 64L;
            List<long[]> written = new ArrayList<>();
            long lapsEnd = ring.tail + CAPACITY - 64;
            long tx = 1;
            while (true) {
                int argsLength = rnd.nextInt(400);
                int aligned = LogRecordLayout.alignedLength(SemanticRecordLayout.HEADER_LENGTH + argsLength);
                long inRing = Math.floorMod(ring.tail, CAPACITY);
                long start = inRing + aligned > CAPACITY ? ring.tail + CAPACITY - inRing : ring.tail;
                if (start + aligned > lapsEnd) {
                    break;
                }
                written.add(new long[] {ring.append(tx, argsLength), tx, argsLength});
                tx++;
            }
            for (long[] w : written) {
                RingReader.Entry e = ring.reader.read(w[0]);
                String ctx = "seed " + seed + " round " + round + " position " + w[0];
                assertEquals(RingReader.Kind.VALID, e.kind(), ctx + ": " + e);
                assertEquals(w[1], SemanticRecordLayout.txId(e.bytes()), ctx);
                assertArrayEquals(RingFixture.args((int) w[2], w[1]), SemanticRecordLayout.arguments(e.bytes()), ctx);
            }
        }
    }
}
