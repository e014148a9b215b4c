package io.asymnvm.core.layout;

import java.nio.ByteBuffer;

/**
 * A redo batch: the physical updates of one or more consecutive transactions, each closed by a commit
 * entry. The batch is applied all-or-nothing (one CRC covers it), so {@code appliedTxId} advances by whole
 * batches.
 *
 * <pre>
 *  0 common header (see LogRecordLayout), type = 2
 * 24 firstTxId(8)
 * 32 lastTxId(8)
 * 40 semanticEnd(8)   semantic-ring position just past lastTxId's semantic record
 * 48 txCount(4)
 * 52 reserved(12)
 * 64 entries ...
 *
 * WRITE entry:  kind=1(1) pad(3) length(4) heapOffset(8) bytes[length] pad to 8
 * COMMIT entry: kind=2(1) pad(3) 0(4)      txId(8)
 * </pre>
 */
public final class RedoBatchLayout {
    public static final int FIRST_TX_OFFSET = 24;
    public static final int LAST_TX_OFFSET = 32;
    public static final int SEMANTIC_END_OFFSET = 40;
    public static final int TX_COUNT_OFFSET = 48;
    public static final int HEADER_LENGTH = 64;

    public static final int ENTRY_HEADER_LENGTH = 16;
    public static final byte ENTRY_WRITE = 1;
    public static final byte ENTRY_COMMIT = 2;
    public static final int ENTRY_KIND_OFFSET = 0;
    public static final int ENTRY_LENGTH_OFFSET = 4;
    public static final int ENTRY_ADDRESS_OFFSET = 8;

    private RedoBatchLayout() {
    }

    /** Bytes a WRITE entry of {@code length} data bytes takes. */
    public static int writeEntryLength(int length) {
        return ENTRY_HEADER_LENGTH + ((length + 7) & -8);
    }

    public static int commitEntryLength() {
        return ENTRY_HEADER_LENGTH;
    }

    public static void putWriteEntry(ByteBuffer b, long heapOffset, byte[] data, int dataOffset, int length) {
        int at = b.position();
        b.put(at + ENTRY_KIND_OFFSET, ENTRY_WRITE);
        b.putInt(at + ENTRY_LENGTH_OFFSET, length);
        b.putLong(at + ENTRY_ADDRESS_OFFSET, heapOffset);
        b.put(at + ENTRY_HEADER_LENGTH, data, dataOffset, length);
        b.position(at + writeEntryLength(length));
    }

    public static void putCommitEntry(ByteBuffer b, long txId) {
        int at = b.position();
        b.put(at + ENTRY_KIND_OFFSET, ENTRY_COMMIT);
        b.putInt(at + ENTRY_LENGTH_OFFSET, 0);
        b.putLong(at + ENTRY_ADDRESS_OFFSET, txId);
        b.position(at + ENTRY_HEADER_LENGTH);
    }

    /** Fills the batch header and seals the record; {@code record} already holds the entries at 64. */
    public static void finish(byte[] record, int length, long position, long firstTx, long lastTx,
                              long semanticEnd, int txCount) {
        ByteBuffer b = LogRecordLayout.wrap(record);
        LogRecordLayout.putHeader(b, length, LogRecordLayout.TYPE_REDO_BATCH, position);
        b.putLong(FIRST_TX_OFFSET, firstTx);
        b.putLong(LAST_TX_OFFSET, lastTx);
        b.putLong(SEMANTIC_END_OFFSET, semanticEnd);
        b.putInt(TX_COUNT_OFFSET, txCount);
        LogRecordLayout.seal(record);
    }

    /** Receives the entries of a batch in order. */
    public interface EntryVisitor {
        void write(long heapOffset, byte[] batch, int dataOffset, int length);

        void commit(long txId);
    }

    /**
     * Walks the entries of a CRC-valid batch. Structural nonsense (an entry running past the batch, an unknown
     * kind) throws {@link IllegalStateException} naming the entry offset: a valid CRC over nonsense means a
     * writer bug, which must stop replay rather than be skipped.
     */
    public static void forEachEntry(byte[] record, EntryVisitor visitor) {
        ByteBuffer b = LogRecordLayout.wrap(record);
        int length = b.getInt(LogRecordLayout.LENGTH_OFFSET);
        int at = HEADER_LENGTH;
        while (at < length) {
            if (at + ENTRY_HEADER_LENGTH > length) {
                throw new IllegalStateException("redo entry header at " + at + " runs past batch length " + length);
            }
            byte kind = b.get(at + ENTRY_KIND_OFFSET);
            int len = b.getInt(at + ENTRY_LENGTH_OFFSET);
            long word = b.getLong(at + ENTRY_ADDRESS_OFFSET);
            if (kind == ENTRY_WRITE) {
                if (len < 0 || len > length - at - ENTRY_HEADER_LENGTH) {
                    throw new IllegalStateException("redo write entry at " + at + " of length " + len
                            + " runs past batch length " + length);
                }
                visitor.write(word, record, at + ENTRY_HEADER_LENGTH, len);
                at += writeEntryLength(len);
            } else if (kind == ENTRY_COMMIT) {
                visitor.commit(word);
                at += ENTRY_HEADER_LENGTH;
            } else {
                throw new IllegalStateException("unknown redo entry kind " + kind + " at " + at);
            }
        }
    }

    public static long firstTxId(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(FIRST_TX_OFFSET);
    }

    public static long lastTxId(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(LAST_TX_OFFSET);
    }

    public static long semanticEnd(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(SEMANTIC_END_OFFSET);
    }

    public static int txCount(byte[] r) {
        return LogRecordLayout.wrap(r).getInt(TX_COUNT_OFFSET);
    }
}
