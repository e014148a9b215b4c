package io.asymnvm.frontend.log;

import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Collects the physical updates of committed transactions until they are shipped as one redo batch (DESIGN §2
 * step 4): many transactions, each closed by a commit entry, in one WRITE off the commit path. Used under the
 * frontend's execution lock.
 */
public final class RedoBuffer {
    /** One write of a transaction: heap address and new bytes. */
    public record Write(long address, byte[] data) {
    }

    private final int maxBatchBytes;
    private ByteBuffer buffer;
    private int txCount;
    private long firstTx;
    private long lastTx;
    private long semanticEnd;
    private long oldestNanos;

    public RedoBuffer(int maxBatchBytes) {
        this.maxBatchBytes = maxBatchBytes;
        this.buffer = ByteBuffer.allocate(Math.min(maxBatchBytes, 64 << 10)).order(ByteOrder.LITTLE_ENDIAN);
        buffer.position(RedoBatchLayout.HEADER_LENGTH);
    }

    /** Redo bytes a transaction with these writes adds to a batch. */
    public static int sizeOf(List<Write> writes) {
        int n = RedoBatchLayout.commitEntryLength();
        for (Write w : writes) {
            n += RedoBatchLayout.writeEntryLength(w.data().length);
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
            RedoBatchLayout.putWriteEntry(buffer, w.address(), w.data(), 0, w.data().length);
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
        return record;
    }
}
