package io.asymnvm.core.layout;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The header every ring record shares (semantic records, redo batches, padding). Records start at 64-byte
 * aligned ring offsets and occupy {@code align64(length)} bytes. Each record carries its logical ring
 * position, so a stale record left over from an earlier lap of the ring never validates at a newer position.
 *
 * <pre>
 *  0 crc32c(4)   over bytes [4, length): the length field itself is covered
 *  4 length(4)   header + body, unpadded
 *  8 type(2)     1 semantic, 2 redo batch, 3 padding
 * 10 flags(2)
 * 12 reserved(4)
 * 16 position(8) logical (monotonic) ring position of this record
 * 24 type-specific header and body ...
 * </pre>
 *
 * A padding record fills the space from its position to the end of the ring, so that no record wraps.
 */
public final class LogRecordLayout {
    public static final int ALIGNMENT = 64;
    public static final int CRC_OFFSET = 0;
    public static final int LENGTH_OFFSET = 4;
    public static final int TYPE_OFFSET = 8;
    public static final int FLAGS_OFFSET = 10;
    public static final int POSITION_OFFSET = 16;
    public static final int COMMON_HEADER_LENGTH = 24;
    /**
     * A position word no record has (logical positions are never negative): written over the header of a stale
     * record so that it can never validate again (see the backend's FrontendLog#invalidateStaleRecords).
     */
    public static final long NO_POSITION = -1L;

    public static final short TYPE_SEMANTIC = 1;
    public static final short TYPE_REDO_BATCH = 2;
    public static final short TYPE_PADDING = 3;

    private LogRecordLayout() {
    }

    public static int alignedLength(int length) {
        return (length + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /** The first record boundary at or after ring position {@code position}. */
    public static long alignUp(long position) {
        return (position + ALIGNMENT - 1) & -ALIGNMENT;
    }

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    /** The length field of a record image (header and body, unpadded). */
    public static int length(byte[] record) {
        return (int) INT.get(record, LENGTH_OFFSET);
    }

    public static ByteBuffer wrap(byte[] record) {
        return ByteBuffer.wrap(record).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Fills the common header (except the CRC) of a record buffer. */
    public static void putHeader(ByteBuffer b, int length, short type, long position) {
        b.putInt(LENGTH_OFFSET, length);
        b.putShort(TYPE_OFFSET, type);
        b.putShort(FLAGS_OFFSET, (short) 0);
        b.putLong(POSITION_OFFSET, position);
    }

    /** Computes and stores the CRC over {@code [4, length)}. */
    public static void seal(byte[] record) {
        INT.set(record, CRC_OFFSET, crc(record, 0, length(record)));
    }

    public static int crc(byte[] bytes, int offset, int length) {
        CRC32C c = new CRC32C();
        c.update(bytes, offset + 4, length - 4);
        return (int) c.getValue();
    }

    /** A padding record of {@code alignedLength} bytes at logical {@code position}; only the header is stored. */
    public static byte[] padding(long position, int alignedLength) {
        byte[] r = new byte[ALIGNMENT];
        ByteBuffer b = wrap(r);
        putHeader(b, COMMON_HEADER_LENGTH, TYPE_PADDING, position);
        b.putInt(12, alignedLength);
        seal(r);
        return r;
    }

    /** The span a padding record covers (stored in its reserved word). */
    public static int paddingSpan(byte[] header, int offset) {
        return ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN).getInt(offset + 12);
    }
}
