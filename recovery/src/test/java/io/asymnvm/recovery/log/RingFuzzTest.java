package io.asymnvm.recovery.log;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.core.region.ByteArrayRegion;
import io.asymnvm.core.testing.FuzzSeeds;
import io.asymnvm.recovery.semantic.SemanticLogReader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fuzzes ring record parsing ({@link RingReader}, {@link RingScanner}, {@link SemanticLogReader}) and redo batch
 * parsing ({@link RedoBatchLayout#forEachEntry}, the walk the replayer and {@code inspect} make over a CRC-valid
 * batch) over a fuzzer-written ring.
 *
 * <p>Input: a {@value #HEADER}-byte header, then the ring's bytes ({@value #CAPACITY}-byte ring, zero-filled):
 * <pre>
 *  0 flags(1)      bit 0: reseal (recompute the CRC of every record the walk from the head finds, so the fuzzer
 *                  reaches what lies behind the CRC); bit 1: redo ring (else semantic)
 *  2 watermark(2)  durable watermark = head + 64 * this
 *  4 tail(2)       semantic read range end = head + 64 * this
 *  8 head(8)       logical head position
 * </pre>
 * Contract: the scan returns a tail in {@code [head, head + capacity]} or refuses with a typed
 * {@link io.asymnvm.core.CorruptRecordException} (only for a record before the watermark); the semantic reader
 * returns records in position order or refuses a bad range with {@link IllegalArgumentException}; a redo walk hands
 * out only ranges inside the batch or refuses with the {@link IllegalStateException} it documents; nothing else
 * escapes and the ring's bytes are never changed.
 */
class RingFuzzTest {
    static final int HEADER = 16;
    static final int CAPACITY = 4096;
    private static final int FLAG_RESEAL = 1;
    private static final int FLAG_REDO = 2;

    @FuzzTest(maxDuration = FuzzSeeds.MAX_DURATION)
    void fuzzRing(byte[] input) {
        if (input.length < HEADER) {
            return;
        }
        ByteBuffer h = ByteBuffer.wrap(input, 0, HEADER).order(ByteOrder.LITTLE_ENDIAN);
        int flags = h.get(0);
        long head = h.getLong(8);
        long watermark = head + 64L * Short.toUnsignedInt(h.getShort(2));
        long semanticTail = head + 64L * Short.toUnsignedInt(h.getShort(4));
        boolean redo = (flags & FLAG_REDO) != 0;
        byte[] ring = Arrays.copyOf(Arrays.copyOfRange(input, HEADER, input.length), CAPACITY);
        if ((flags & FLAG_RESEAL) != 0) {
            reseal(ring, head);
        }
        ByteArrayRegion region = new ByteArrayRegion("fuzzed ring", ring.clone());
        short type = redo ? LogRecordLayout.TYPE_REDO_BATCH : LogRecordLayout.TYPE_SEMANTIC;
        RingReader reader = new RingReader(region, 0, CAPACITY, type, region.name());

        long[] previous = {Long.MIN_VALUE};
        try {
            RingScanner.Scan scan = RingScanner.scan(reader, head, watermark, e -> {
                assertTrue(e.position() > previous[0] || previous[0] == Long.MIN_VALUE, "positions go backwards");
                previous[0] = e.position();
                assertEquals(type, LogRecordLayout.wrap(e.bytes()).getShort(LogRecordLayout.TYPE_OFFSET));
                if (redo) {
                    walkBatch(e.bytes());
                } else {
                    SemanticRecordLayout.txId(e.bytes());
                    SemanticRecordLayout.methodHash(e.bytes());
                    SemanticRecordLayout.arguments(e.bytes());
                }
            });
            if (head <= Long.MAX_VALUE - CAPACITY) {
                assertTrue(scan.tail() >= head && scan.tail() <= head + CAPACITY, "tail " + scan.tail()
                        + " outside the lap from head " + head);
                assertTrue(scan.records() <= CAPACITY / LogRecordLayout.ALIGNMENT, "records " + scan.records());
            }
        } catch (AsymNvmException e) {
            assertNotEquals(ErrorCode.UNKNOWN, e.errorCode(), e.getMessage());
            assertTrue(head < watermark, "a corrupt record reported with no watermark ahead of the head: " + e);
        }
        if (!redo) {
            readSemantic(region, head, semanticTail);
        }
        assertArrayEquals(ring, region.read(0, CAPACITY), "the ring was changed by reading it");
    }

    private static void readSemantic(ByteArrayRegion region, long head, long tail) {
        List<SemanticLogReader.Record> records;
        try {
            records = SemanticLogReader.read((offset, length) -> region.read(offset, length), CAPACITY, head, tail);
        } catch (IllegalArgumentException refused) {
            assertTrue(tail < head || tail - head > CAPACITY, "range [" + head + ", " + tail + ") refused: "
                    + refused.getMessage());
            return;
        }
        long last = Long.MIN_VALUE;
        for (SemanticLogReader.Record r : records) {
            assertTrue(r.position() >= head && r.position() < tail && (last == Long.MIN_VALUE || r.position() > last),
                    "record position " + r.position() + " outside [" + head + ", " + tail + ") or out of order");
            last = r.position();
        }
    }

    /** Walks a CRC-valid batch as the replayer does; every entry must lie inside the batch. */
    private static void walkBatch(byte[] batch) {
        int length = LogRecordLayout.wrap(batch).getInt(LogRecordLayout.LENGTH_OFFSET);
        RedoBatchLayout.firstTxId(batch);
        RedoBatchLayout.lastTxId(batch);
        RedoBatchLayout.semanticEnd(batch);
        RedoBatchLayout.txCount(batch);
        try {
            RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
                @Override
                public void write(long heapOffset, byte[] b, int dataOffset, int len) {
                    assertTrue(dataOffset >= RedoBatchLayout.HEADER_LENGTH && len >= 0 && dataOffset <= length - len,
                            "write entry [" + dataOffset + ", +" + len + ") outside the batch of " + length);
                }

                @Override
                public void commit(long txId) {
                }
            });
        } catch (IllegalStateException malformed) {
            if (!String.valueOf(malformed.getMessage()).contains("redo")) {
                fail("redo walk refused without naming the entry", malformed);
            }
        }
    }

    /** Recomputes the CRC of every record the walk from {@code head} finds, as a writer would have sealed it. */
    private static void reseal(byte[] ring, long head) {
        ByteBuffer b = ByteBuffer.wrap(ring).order(ByteOrder.LITTLE_ENDIAN);
        long pos = head;
        for (int steps = 0; steps < CAPACITY / LogRecordLayout.ALIGNMENT; steps++) {
            int inRing = (int) Math.floorMod(pos, (long) CAPACITY);
            if (inRing > CAPACITY - LogRecordLayout.COMMON_HEADER_LENGTH) {
                return; // an unaligned head near the end: no header fits
            }
            int length = b.getInt(inRing + LogRecordLayout.LENGTH_OFFSET);
            if (length < LogRecordLayout.COMMON_HEADER_LENGTH || length > CAPACITY - inRing) {
                return;
            }
            byte[] record = Arrays.copyOfRange(ring, inRing, inRing + length);
            b.putInt(inRing + LogRecordLayout.CRC_OFFSET, LogRecordLayout.crc(record, 0, length));
            if (b.getShort(inRing + LogRecordLayout.TYPE_OFFSET) == LogRecordLayout.TYPE_PADDING) {
                pos += CAPACITY - inRing;
            } else {
                pos += LogRecordLayout.alignedLength(length);
            }
        }
    }

    /** Seeds: semantic rings with records, padding and a wrap; redo rings with batches of writes and commits. */
    static Map<String, byte[]> seeds() {
        Map<String, byte[]> s = new LinkedHashMap<>();
        byte[] sem = new byte[CAPACITY];
        long pos = 0;
        for (int tx = 1; tx <= 3; tx++) {
            byte[] r = SemanticRecordLayout.encode(pos, tx, 0xABCDL * tx, new byte[tx * 20], tx * 20);
            System.arraycopy(r, 0, sem, (int) pos, r.length);
            pos += r.length;
        }
        s.put("semantic", input(0, 2, (int) (pos / 64), 0, sem));
        byte[] wrapped = new byte[CAPACITY];
        long head = 5L * CAPACITY + CAPACITY - 128;
        byte[] first = SemanticRecordLayout.encode(head, 7, 1, new byte[8], 8);
        System.arraycopy(first, 0, wrapped, CAPACITY - 128, first.length);
        byte[] pad = LogRecordLayout.padding(head + 64, 64);
        System.arraycopy(pad, 0, wrapped, CAPACITY - 64, pad.length);
        byte[] next = SemanticRecordLayout.encode(head + 128, 8, 1, new byte[100], 100);
        System.arraycopy(next, 0, wrapped, 0, next.length);
        s.put("semantic-wrap", input(0, 3, 4, head, wrapped));
        byte[] redoRing = new byte[CAPACITY];
        byte[] batch = batch(0, 1, new long[] {64, 4096}, new int[] {8, 33});
        System.arraycopy(batch, 0, redoRing, 0, batch.length);
        byte[] second = batch(batch.length, 2, new long[] {128}, new int[] {0});
        System.arraycopy(second, 0, redoRing, batch.length, second.length);
        s.put("redo", input(FLAG_REDO, 0, 0, 0, redoRing));
        s.put("redo-reseal", input(FLAG_REDO | FLAG_RESEAL, 0, 0, 0, redoRing));
        return s;
    }

    private static byte[] batch(long position, long txId, long[] offsets, int[] lengths) {
        ByteBuffer b = ByteBuffer.allocate(2048).order(ByteOrder.LITTLE_ENDIAN).position(RedoBatchLayout.HEADER_LENGTH);
        for (int i = 0; i < offsets.length; i++) {
            byte[] data = new byte[lengths[i]];
            Arrays.fill(data, (byte) (i + 1));
            RedoBatchLayout.putWriteEntry(b, offsets[i], data, 0, data.length);
        }
        RedoBatchLayout.putCommitEntry(b, txId);
        int length = b.position();
        byte[] record = Arrays.copyOf(b.array(), LogRecordLayout.alignedLength(length));
        RedoBatchLayout.finish(record, length, position, txId, txId, 0, 1);
        return record;
    }

    private static byte[] input(int flags, int watermark, int tail, long head, byte[] ring) {
        ByteBuffer b = ByteBuffer.allocate(HEADER + ring.length).order(ByteOrder.LITTLE_ENDIAN);
        b.put(0, (byte) flags).putShort(2, (short) watermark).putShort(4, (short) tail).putLong(8, head);
        b.position(HEADER);
        b.put(ring);
        return b.array();
    }

    @Test
    void committedSeedsMatchTheirGenerator() {
        FuzzSeeds.check(getClass(), "fuzzRing", seeds());
    }
}
