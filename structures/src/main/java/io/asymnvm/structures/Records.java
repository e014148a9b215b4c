package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.ValueCodec;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

import static io.asymnvm.structures.layout.NodePageLayout.BLOB_ADDRESS_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.BLOB_LENGTH_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.BLOB_REFERENCE_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.CHILD_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_INLINE_VALUE;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_KEY_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_VALUE_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_HEADER_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_KEY_LENGTH_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.RECORD_TAG_OFFSET;
import static io.asymnvm.structures.layout.NodePageLayout.TAG_BLOB;

/**
 * Record images in the node page format: building leaf/bucket records (inline or with the value in a blob),
 * inner records, reading keys and values back, and the input checks that run before any write.
 */
final class Records {
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private Records() {
    }

    /** Refuses an encoded key a node cannot hold. */
    static void checkKey(byte[] key) {
        if (key.length > MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("key of " + key.length + " encoded bytes exceeds the limit of "
                    + MAX_KEY_LENGTH + " bytes a node can hold");
        }
    }

    /** Refuses an encoded value larger than one operation may write. */
    static void checkValue(byte[] value) {
        if (value.length > MAX_VALUE_LENGTH) {
            throw new IllegalArgumentException("value of " + value.length + " encoded bytes exceeds the limit of "
                    + MAX_VALUE_LENGTH + " bytes");
        }
    }

    /** Footprint in a node of a record for this key and value. */
    static int leafRecordLength(byte[] key, byte[] value) {
        return RECORD_HEADER_LENGTH + key.length
                + (value.length <= MAX_INLINE_VALUE ? value.length : BLOB_REFERENCE_LENGTH);
    }

    /** A leaf/bucket record; a value beyond the inline limit is written to a new blob first. */
    static byte[] leaf(Transaction tx, byte[] key, byte[] value) {
        if (value.length <= MAX_INLINE_VALUE) {
            byte[] r = header(key, value.length, value.length);
            System.arraycopy(value, 0, r, RECORD_HEADER_LENGTH + key.length, value.length);
            return r;
        }
        long blob = tx.allocate(value.length);
        tx.write(blob, value);
        byte[] r = header(key, TAG_BLOB, BLOB_REFERENCE_LENGTH);
        int p = RECORD_HEADER_LENGTH + key.length;
        INT.set(r, p + BLOB_LENGTH_OFFSET, value.length);
        LONG.set(r, p + BLOB_ADDRESS_OFFSET, blob);
        return r;
    }

    /** An inner (separator) record. */
    static byte[] inner(byte[] key, long child) {
        byte[] r = header(key, CHILD_LENGTH, CHILD_LENGTH);
        LONG.set(r, RECORD_HEADER_LENGTH + key.length, child);
        return r;
    }

    private static byte[] header(byte[] key, int tag, int payloadLength) {
        byte[] r = new byte[RECORD_HEADER_LENGTH + key.length + payloadLength];
        SHORT.set(r, RECORD_KEY_LENGTH_OFFSET, (short) key.length);
        SHORT.set(r, RECORD_TAG_OFFSET, (short) tag);
        System.arraycopy(key, 0, r, RECORD_HEADER_LENGTH, key.length);
        return r;
    }

    static int keyLength(byte[] record) {
        return (short) SHORT.get(record, RECORD_KEY_LENGTH_OFFSET) & 0xFFFF;
    }

    static byte[] key(byte[] record) {
        return Arrays.copyOfRange(record, RECORD_HEADER_LENGTH, RECORD_HEADER_LENGTH + keyLength(record));
    }

    static int compareKeys(byte[] recordA, byte[] recordB) {
        return Arrays.compareUnsigned(recordA, RECORD_HEADER_LENGTH, RECORD_HEADER_LENGTH + keyLength(recordA),
                recordB, RECORD_HEADER_LENGTH, RECORD_HEADER_LENGTH + keyLength(recordB));
    }

    /** Inner record: its child. */
    static long child(byte[] record) {
        return (long) LONG.get(record, RECORD_HEADER_LENGTH + keyLength(record));
    }

    /** The value of leaf record {@code i} of {@code page} (read from its blob if stored out of line). */
    static byte[] value(Transaction tx, NodePage page, int i) {
        return value(new Session(tx), page, i);
    }

    /**
     * The value of leaf record {@code i} of {@code page}, as a fresh array the caller owns (a map of
     * {@code byte[]} values returns it as it is); a blob reference that leads outside the heap, or claims a length
     * no value can have, is the structure's corruption.
     */
    static byte[] value(Session session, NodePage page, int i) {
        if (page.isBlob(i)) {
            int length = page.blobLength(i);
            if (length <= MAX_INLINE_VALUE || length > MAX_VALUE_LENGTH) {
                throw new StructureCorruptException(session.structure(), page.address(), blob(page, i) + " length",
                        "(" + MAX_INLINE_VALUE + ", " + MAX_VALUE_LENGTH + "] bytes", length + " bytes", null);
            }
            return session.readBlob(page, i, length);
        }
        int o = page.payloadOffset(i);
        return Arrays.copyOfRange(page.block.bytes, o, o + page.tag(i));
    }

    /** How corruption reports name the blob of leaf record {@code i} of {@code page}. */
    static String blob(NodePage page, int i) {
        return "blob of record " + i + " of page " + page.address();
    }

    /**
     * Replaces the value of leaf record {@code i} of {@code page} in place when the new value fits where the old
     * one lives: an inline value no longer than the old inline payload (the record keeps its slot and offset), or
     * an out-of-line value no longer than the old blob's length (the blob block keeps its size class; only its
     * bytes and, when shorter, the record's length word change). Then the transaction's redo holds the value bytes
     * and no allocator, slot or record traffic. Returns how many bytes the record shrank (0 for a blob), or -1 when
     * the value does not fit in place and nothing was written (the caller removes and re-inserts the record).
     */
    static int overwriteInPlace(Transaction tx, NodePage page, int i, byte[] value) {
        if (!page.isBlob(i)) {
            return value.length <= MAX_INLINE_VALUE ? page.overwriteInlineValue(i, value) : -1;
        }
        int old = page.blobLength(i);
        if (value.length <= MAX_INLINE_VALUE || value.length > old) {
            return -1;
        }
        tx.write(page.blobAddress(i), value);
        if (value.length != old) {
            page.block.putInt(page.payloadOffset(i) + BLOB_LENGTH_OFFSET, value.length);
        }
        return 0;
    }

    /**
     * The value of leaf record {@code i} of {@code page} decoded by {@code codec}: an inline value is decoded
     * where it lies in the page (the codec must copy what it keeps), a blob as {@link #value(Session, NodePage,
     * int)} reads it.
     */
    static <T> T decodeValue(Session session, NodePage page, int i, ValueCodec<T> codec) {
        if (page.isBlob(i)) {
            byte[] v = value(session, page, i);
            return codec.decode(v, 0, v.length);
        }
        return codec.decode(page.block.bytes, page.payloadOffset(i), page.tag(i));
    }

    /** Frees the blob of leaf record {@code i}, if any (before the record is dropped or replaced). */
    static void freeBlob(Transaction tx, NodePage page, int i) {
        if (page.isBlob(i)) {
            tx.free(page.blobAddress(i));
        }
    }
}
