package io.asymnvm.frontend.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Collects the physical updates of committed transactions until they are shipped as one redo batch (DESIGN §2
 * step 4): many transactions, each closed by a commit entry, in one WRITE off the commit path. Used under the
 * frontend's execution lock.
 *
 * <p><b>Coalescing</b> (issue 8 goal 7). A batch is applied all-or-nothing ({@code RedoBatchLayout}): no reader ever
 * sees the heap between two of its transactions, only the state after its last one. So a write that repeats an
 * earlier write of the same batch at the same address with the same length need not be logged twice: its bytes
 * replace the earlier entry's bytes in place, and the batch shrinks. That is safe exactly when no entry after the
 * earlier one overlaps its range (then the new bytes are the last ones written to every byte of it, as they would be
 * if appended); otherwise, or when the earlier entry is more than {@value #COALESCE_SCAN} entries back (the check
 * stays cheap), the write is appended as usual. Every transaction keeps its commit entry, in order, so the batch's
 * transaction ids, count and boundaries are unchanged; a transaction whose writes were all coalesced into earlier
 * entries is a bare commit entry. Redo volume on hot keys drops, and so do the bytes the backend persists.
 */
public final class RedoBuffer {
    /** How many later entries a coalescing candidate is checked against, at most. */
    static final int COALESCE_SCAN = 256;

    /**
     * One write of a transaction: heap address and its new bytes, {@code length} of them at {@code offset} of
     * {@code bytes}. The array may be larger than the write (a transaction refers to the bytes where its private
     * page holds them, issue 8: no copy of its own per write); it must not change until the write is appended.
     */
    public record Write(long address, byte[] bytes, int offset, int length) {
        public Write {
            Objects.checkFromIndexSize(offset, length, bytes.length);
        }

        /** A write of all of {@code data}. */
        public Write(long address, byte[] data) {
            this(address, data, 0, data.length);
        }

        /** A copy of its bytes. */
        public byte[] data() {
            return Arrays.copyOfRange(bytes, offset, offset + length);
        }
    }

    private final int maxBatchBytes;
    private ByteBuffer buffer;
    private int txCount;
    private long firstTx;
    private long lastTx;
    private long semanticEnd;
    private long oldestNanos;
    // write entries of the current batch, in order: heap address, data length, buffer position of the entry
    private long[] entryAddress = new long[64];
    private int[] entryLength = new int[64];
    private int[] entryPosition = new int[64];
    private int entryCount;
    private final Map<Long, Integer> lastEntryAt = new HashMap<>();
    private long coalescedWrites;
    private long coalescedBytes;

    public RedoBuffer(int maxBatchBytes) {
        this.maxBatchBytes = maxBatchBytes;
        this.buffer = ByteBuffer.allocate(Math.min(maxBatchBytes, 64 << 10)).order(ByteOrder.LITTLE_ENDIAN);
        buffer.position(RedoBatchLayout.HEADER_LENGTH);
    }

    /** Redo bytes a transaction with these writes adds to a batch. */
    public static int sizeOf(List<Write> writes) {
        int n = RedoBatchLayout.commitEntryLength();
        for (Write w : writes) {
            n += RedoBatchLayout.writeEntryLength(w.length());
        }
        return n;
    }

    public int maxBatchBytes() {
        return maxBatchBytes;
    }

    /** Largest redo a single transaction may produce. */
    public int maxTransactionBytes() {
        return maxBatchBytes - RedoBatchLayout.HEADER_LENGTH;
    }

    public boolean isEmpty() {
        return txCount == 0;
    }

    public int txCount() {
        return txCount;
    }

    public int bytes() {
        return buffer.position();
    }

    public long oldestNanos() {
        return oldestNanos;
    }

    /** Whether a transaction of {@code txBytes} still fits in the current batch. */
    public boolean hasRoomFor(int txBytes) {
        return buffer.position() + txBytes <= maxBatchBytes;
    }

    public void append(long txId, List<Write> writes, long semanticEndAfterTx) {
        int need = sizeOf(writes);
        if (buffer.remaining() < need) {
            int cap = Math.max(buffer.capacity() * 2, buffer.position() + need);
            ByteBuffer bigger = ByteBuffer.allocate(cap).order(ByteOrder.LITTLE_ENDIAN);
            buffer.flip();
            bigger.put(buffer);
            buffer = bigger;
        }
        for (Write w : writes) {
            if (!coalesce(w)) {
                record(w.address(), w.length(), buffer.position());
                RedoBatchLayout.putWriteEntry(buffer, w.address(), w.bytes(), w.offset(), w.length());
            }
        }
        RedoBatchLayout.putCommitEntry(buffer, txId);
        if (txCount == 0) {
            firstTx = txId;
            oldestNanos = System.nanoTime();
        }
        txCount++;
        lastTx = txId;
        semanticEnd = semanticEndAfterTx;
    }

    /**
     * Writes {@code w}'s bytes over an earlier entry of this batch at the same address and length if no later entry
     * overlaps that range (see the class comment); returns whether it did.
     */
    private boolean coalesce(Write w) {
        Integer earlier = lastEntryAt.get(w.address());
        if (earlier == null) {
            return false;
        }
        int e = earlier;
        int length = w.length();
        if (entryLength[e] != length || entryCount - e - 1 > COALESCE_SCAN) {
            return false;
        }
        long from = w.address();
        long to = from + length;
        for (int j = e + 1; j < entryCount; j++) {
            if (entryAddress[j] < to && from < entryAddress[j] + entryLength[j]) {
                return false;
            }
        }
        buffer.put(entryPosition[e] + RedoBatchLayout.ENTRY_HEADER_LENGTH, w.bytes(), w.offset(), length);
        coalescedWrites++;
        coalescedBytes += RedoBatchLayout.writeEntryLength(length);
        return true;
    }

    private void record(long address, int length, int position) {
        if (entryCount == entryAddress.length) {
            entryAddress = Arrays.copyOf(entryAddress, entryCount * 2);
            entryLength = Arrays.copyOf(entryLength, entryCount * 2);
            entryPosition = Arrays.copyOf(entryPosition, entryCount * 2);
        }
        entryAddress[entryCount] = address;
        entryLength[entryCount] = length;
        entryPosition[entryCount] = position;
        lastEntryAt.put(address, entryCount);
        entryCount++;
    }

    /** Writes not logged because a later write of the same batch replaced them in place, since this buffer began. */
    public long coalescedWrites() {
        return coalescedWrites;
    }

    /** Redo bytes those writes would have taken. */
    public long coalescedBytes() {
        return coalescedBytes;
    }

    public long lastTxId() {
        return lastTx;
    }

    /** Aligned length of the batch that {@link #seal(long)} would produce. */
    public int alignedLength() {
        return LogRecordLayout.alignedLength(buffer.position());
    }

    /** Builds the sealed batch record for ring position {@code position} and empties the buffer. */
    public byte[] seal(long position) {
        int length = buffer.position();
        byte[] record = new byte[LogRecordLayout.alignedLength(length)];
        System.arraycopy(buffer.array(), 0, record, 0, length);
        RedoBatchLayout.finish(record, length, position, firstTx, lastTx, semanticEnd, txCount);
        buffer.clear();
        buffer.position(RedoBatchLayout.HEADER_LENGTH);
        txCount = 0;
        entryCount = 0;
        lastEntryAt.clear();
        return record;
    }
}
