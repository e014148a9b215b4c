package io.asymnvm.core.layout;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Covers the common record header and both record kinds built on it: semantic records and redo batches. */
@Timeout(60)
class LogRecordLayoutTest {

    private static int storedCrc(byte[] r) {
        return LogRecordLayout.wrap(r).getInt(LogRecordLayout.CRC_OFFSET);
    }

    private static int storedLength(byte[] r) {
        return LogRecordLayout.wrap(r).getInt(LogRecordLayout.LENGTH_OFFSET);
    }

    private static boolean crcValid(byte[] r, int length) {
        return LogRecordLayout.crc(r, 0, length) == storedCrc(r);
    }

    /** Flips each byte of the sealed part of the record in turn: the stored CRC must no longer match. */
    private static void assertEveryFlipDetected(byte[] sealed) {
        int length = storedLength(sealed);
        assertTrue(crcValid(sealed, length), "freshly sealed record must validate");
        for (int i = 0; i < length; i++) {
            for (int bit : new int[] {0x01, 0x80}) {
                byte[] r = sealed.clone();
                r[i] ^= (byte) bit;
                assertTrue(!crcValid(r, length), "flip of bit " + bit + " at byte " + i + " not detected");
            }
        }
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 13);
        }
        return b;
    }

    // ---- common header ----

    @Test
    void alignedLengthRoundsUpToSixtyFour() {
        assertEquals(0, LogRecordLayout.alignedLength(0));
        assertEquals(64, LogRecordLayout.alignedLength(1));
        assertEquals(64, LogRecordLayout.alignedLength(64));
        assertEquals(128, LogRecordLayout.alignedLength(65));
    }

    @Test
    void headerAndCrcLayout() {
        byte[] r = new byte[64];
        ByteBuffer b = LogRecordLayout.wrap(r);
        LogRecordLayout.putHeader(b, 40, LogRecordLayout.TYPE_SEMANTIC, 0x1122334455L);
        LogRecordLayout.seal(r);
        assertEquals(40, b.getInt(LogRecordLayout.LENGTH_OFFSET));
        assertEquals(LogRecordLayout.TYPE_SEMANTIC, b.getShort(LogRecordLayout.TYPE_OFFSET));
        assertEquals(0, b.getShort(LogRecordLayout.FLAGS_OFFSET));
        assertEquals(0x1122334455L, b.getLong(LogRecordLayout.POSITION_OFFSET));
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update(r, 4, 36);
        assertEquals((int) c.getValue(), storedCrc(r), "CRC covers [4, length)");
        // bytes past the unpadded length are not covered
        byte[] tail = r.clone();
        tail[50] = 7;
        assertTrue(crcValid(tail, 40));
    }

    @Test
    void crcHonoursOffsetIntoALargerBuffer() {
        byte[] rec = SemanticRecordLayout.encode(128, 1, 2, bytes(10, 1), 10);
        byte[] ring = new byte[1024];
        System.arraycopy(rec, 0, ring, 320, rec.length);
        assertEquals(storedCrc(rec), LogRecordLayout.crc(ring, 320, storedLength(rec)));
    }

    @Test
    void sameContentAtAnotherPositionHasAnotherCrc() {
        byte[] a = SemanticRecordLayout.encode(0, 5, 6, bytes(20, 3), 20);
        byte[] b = SemanticRecordLayout.encode(4096, 5, 6, bytes(20, 3), 20);
        assertNotEquals(storedCrc(a), storedCrc(b));
        // a record copied from an earlier lap does not validate as the record at the newer position
        byte[] stale = a.clone();
        LogRecordLayout.wrap(stale).putLong(LogRecordLayout.POSITION_OFFSET, 4096);
        assertTrue(!crcValid(stale, storedLength(stale)));
    }

    @Test
    void paddingRecord() {
        byte[] p = LogRecordLayout.padding(8192 + 192, 320);
        assertEquals(LogRecordLayout.ALIGNMENT, p.length);
        ByteBuffer b = LogRecordLayout.wrap(p);
        assertEquals(LogRecordLayout.TYPE_PADDING, b.getShort(LogRecordLayout.TYPE_OFFSET));
        assertEquals(LogRecordLayout.COMMON_HEADER_LENGTH, storedLength(p));
        assertEquals(8192 + 192, b.getLong(LogRecordLayout.POSITION_OFFSET));
        assertEquals(320, LogRecordLayout.paddingSpan(p, 0));
        byte[] ring = new byte[256];
        System.arraycopy(p, 0, ring, 64, p.length);
        assertEquals(320, LogRecordLayout.paddingSpan(ring, 64));
        assertEveryFlipDetected(p);
    }

    // ---- semantic records ----

    @Test
    void semanticRecordRoundTrip() {
        byte[] args = bytes(100, 9);
        byte[] r = SemanticRecordLayout.encode(640, 77, 0xDEADBEEFCAFEL, args, 70);
        int length = SemanticRecordLayout.HEADER_LENGTH + 70;
        assertEquals(LogRecordLayout.alignedLength(length), r.length);
        assertEquals(0, r.length % LogRecordLayout.ALIGNMENT);
        assertEquals(length, storedLength(r));
        assertEquals(LogRecordLayout.TYPE_SEMANTIC, LogRecordLayout.wrap(r).getShort(LogRecordLayout.TYPE_OFFSET));
        assertEquals(640, LogRecordLayout.wrap(r).getLong(LogRecordLayout.POSITION_OFFSET));
        assertEquals(77, SemanticRecordLayout.txId(r));
        assertEquals(0xDEADBEEFCAFEL, SemanticRecordLayout.methodHash(r));
        assertArrayEquals(Arrays.copyOf(args, 70), SemanticRecordLayout.arguments(r));
        assertTrue(crcValid(r, length));
    }

    @Test
    void semanticRecordWithoutArguments() {
        byte[] r = SemanticRecordLayout.encode(0, 1, 2, new byte[0], 0);
        assertEquals(64, r.length);
        assertArrayEquals(new byte[0], SemanticRecordLayout.arguments(r));
        assertTrue(crcValid(r, storedLength(r)));
    }

    @Test
    void anyFlippedByteInSealedSemanticRecordChangesCrc() {
        assertEveryFlipDetected(SemanticRecordLayout.encode(192, 12345, -1L, bytes(57, 4), 57));
    }

    // ---- redo batches ----

    private record Visit(String kind, long word, byte[] data) {
    }

    private static final class Recorder implements RedoBatchLayout.EntryVisitor {
        final List<Visit> visits = new ArrayList<>();

        @Override
        public void write(long heapOffset, byte[] batch, int dataOffset, int length) {
            if (dataOffset < 0 || length < 0 || length > batch.length - dataOffset) {
                throw new AssertionError("visitor handed slice [" + dataOffset + ", +" + length
                        + ") outside a batch of " + batch.length + " bytes");
            }
            visits.add(new Visit("write", heapOffset, Arrays.copyOfRange(batch, dataOffset, dataOffset + length)));
        }

        @Override
        public void commit(long txId) {
            visits.add(new Visit("commit", txId, null));
        }
    }

    /** tx 10: two writes; tx 11: one 3-byte write (padded) and one empty write; tx 12: no writes. */
    private static byte[] sampleBatch() {
        byte[] record = new byte[1024];
        ByteBuffer b = LogRecordLayout.wrap(record);
        b.position(RedoBatchLayout.HEADER_LENGTH);
        RedoBatchLayout.putWriteEntry(b, 4096, bytes(16, 1), 0, 16);
        RedoBatchLayout.putWriteEntry(b, 8192, bytes(40, 2), 5, 20);
        RedoBatchLayout.putCommitEntry(b, 10);
        RedoBatchLayout.putWriteEntry(b, 100, new byte[] {7, 8, 9}, 0, 3);
        RedoBatchLayout.putWriteEntry(b, 200, new byte[0], 0, 0);
        RedoBatchLayout.putCommitEntry(b, 11);
        RedoBatchLayout.putCommitEntry(b, 12);
        int length = b.position();
        byte[] exact = Arrays.copyOf(record, LogRecordLayout.alignedLength(length));
        RedoBatchLayout.finish(exact, length, 2048, 10, 12, 99_999, 3);
        return exact;
    }

    @Test
    void entryLengths() {
        assertEquals(16, RedoBatchLayout.commitEntryLength());
        assertEquals(16, RedoBatchLayout.writeEntryLength(0));
        assertEquals(24, RedoBatchLayout.writeEntryLength(1));
        assertEquals(24, RedoBatchLayout.writeEntryLength(8));
        assertEquals(32, RedoBatchLayout.writeEntryLength(9));
    }

    @Test
    void redoBatchHeaderRoundTrip() {
        byte[] r = sampleBatch();
        int expectedLength = RedoBatchLayout.HEADER_LENGTH + RedoBatchLayout.writeEntryLength(16)
                + RedoBatchLayout.writeEntryLength(20) + 16 + RedoBatchLayout.writeEntryLength(3)
                + RedoBatchLayout.writeEntryLength(0) + 16 + 16;
        assertEquals(expectedLength, storedLength(r));
        assertEquals(LogRecordLayout.TYPE_REDO_BATCH, LogRecordLayout.wrap(r).getShort(LogRecordLayout.TYPE_OFFSET));
        assertEquals(2048, LogRecordLayout.wrap(r).getLong(LogRecordLayout.POSITION_OFFSET));
        assertEquals(10, RedoBatchLayout.firstTxId(r));
        assertEquals(12, RedoBatchLayout.lastTxId(r));
        assertEquals(99_999, RedoBatchLayout.semanticEnd(r));
        assertEquals(3, RedoBatchLayout.txCount(r));
        assertTrue(crcValid(r, expectedLength));
    }

    @Test
    void forEachEntryVisitsWritesAndCommitsInOrder() {
        Recorder rec = new Recorder();
        RedoBatchLayout.forEachEntry(sampleBatch(), rec);
        List<Visit> v = rec.visits;
        assertEquals(7, v.size(), v.toString());
        assertEquals("write", v.get(0).kind());
        assertEquals(4096, v.get(0).word());
        assertArrayEquals(bytes(16, 1), v.get(0).data());
        assertEquals("write", v.get(1).kind());
        assertEquals(8192, v.get(1).word());
        assertArrayEquals(Arrays.copyOfRange(bytes(40, 2), 5, 25), v.get(1).data());
        assertEquals("commit", v.get(2).kind());
        assertEquals(10, v.get(2).word());
        assertEquals("write", v.get(3).kind());
        assertEquals(100, v.get(3).word());
        assertArrayEquals(new byte[] {7, 8, 9}, v.get(3).data());
        assertEquals("write", v.get(4).kind());
        assertEquals(200, v.get(4).word());
        assertArrayEquals(new byte[0], v.get(4).data());
        assertEquals("commit", v.get(5).kind());
        assertEquals(11, v.get(5).word());
        assertEquals("commit", v.get(6).kind());
        assertEquals(12, v.get(6).word());
    }

    @Test
    void emptyBatchVisitsNothing() {
        byte[] r = new byte[64];
        RedoBatchLayout.finish(r, RedoBatchLayout.HEADER_LENGTH, 0, 1, 0, 0, 0);
        Recorder rec = new Recorder();
        RedoBatchLayout.forEachEntry(r, rec);
        assertTrue(rec.visits.isEmpty());
    }

    @Test
    void anyFlippedByteInSealedRedoBatchChangesCrc() {
        assertEveryFlipDetected(sampleBatch());
    }

    /** Builds a one-write batch whose write entry claims {@code claimedLength} data bytes. */
    private static byte[] batchWithWriteLength(int claimedLength) {
        byte[] r = new byte[256];
        ByteBuffer b = LogRecordLayout.wrap(r);
        b.position(RedoBatchLayout.HEADER_LENGTH);
        RedoBatchLayout.putWriteEntry(b, 64, bytes(8, 0), 0, 8);
        RedoBatchLayout.putCommitEntry(b, 1);
        int length = b.position();
        b.putInt(RedoBatchLayout.HEADER_LENGTH + RedoBatchLayout.ENTRY_LENGTH_OFFSET, claimedLength);
        RedoBatchLayout.finish(r, length, 0, 1, 1, 0, 1);
        return r;
    }

    @Test
    void writeEntryRunningPastTheBatchIsRefused() {
        // entry claims 100 bytes, the batch holds 8 + a commit
        Recorder rec = new Recorder();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> RedoBatchLayout.forEachEntry(batchWithWriteLength(100), rec));
        assertTrue(e.getMessage().contains("at " + RedoBatchLayout.HEADER_LENGTH), e.getMessage());
        assertTrue(e.getMessage().contains("length 100"), e.getMessage());
        assertTrue(rec.visits.isEmpty(), "nothing of the bad entry may be applied");
    }

    @Test
    void writeEntryWithNegativeLengthIsRefused() {
        Recorder rec = new Recorder();
        assertThrows(IllegalStateException.class, () -> RedoBatchLayout.forEachEntry(batchWithWriteLength(-8), rec));
        assertTrue(rec.visits.isEmpty());
    }

    @Test
    void writeEntryWithHugeLengthIsRefusedNotOverflowed() {
        for (int claimed : new int[] {Integer.MAX_VALUE, Integer.MAX_VALUE - 70, Integer.MAX_VALUE - 100}) {
            Recorder rec = new Recorder();
            assertThrows(IllegalStateException.class,
                    () -> RedoBatchLayout.forEachEntry(batchWithWriteLength(claimed), rec), "claimed " + claimed);
            assertTrue(rec.visits.isEmpty(), "claimed " + claimed);
        }
    }

    @Test
    void entryHeaderRunningPastTheBatchIsRefused() {
        byte[] r = new byte[256];
        ByteBuffer b = LogRecordLayout.wrap(r);
        b.position(RedoBatchLayout.HEADER_LENGTH);
        RedoBatchLayout.putCommitEntry(b, 1);
        RedoBatchLayout.putCommitEntry(b, 2);
        int length = b.position() - 8; // the second entry's header is cut in half
        RedoBatchLayout.finish(r, length, 0, 1, 2, 0, 2);
        Recorder rec = new Recorder();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> RedoBatchLayout.forEachEntry(r, rec));
        assertTrue(e.getMessage().contains("at " + (RedoBatchLayout.HEADER_LENGTH + 16)), e.getMessage());
        assertEquals(1, rec.visits.size(), "entries before the bad one are visited in order");
    }

    @Test
    void unknownEntryKindIsRefused() {
        byte[] r = new byte[256];
        ByteBuffer b = LogRecordLayout.wrap(r);
        b.position(RedoBatchLayout.HEADER_LENGTH);
        RedoBatchLayout.putCommitEntry(b, 1);
        int length = b.position();
        r[RedoBatchLayout.HEADER_LENGTH + RedoBatchLayout.ENTRY_KIND_OFFSET] = 9;
        RedoBatchLayout.finish(r, length, 0, 1, 1, 0, 1);
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> RedoBatchLayout.forEachEntry(r, new Recorder()));
        assertTrue(e.getMessage().contains("kind 9"), e.getMessage());
    }
}
