package io.asymnvm.core.layout;

import java.nio.ByteBuffer;

/**
 * A semantic log record: one per transaction, written to the frontend's semantic ring before commit.
 * Replaying it means calling the method named by {@code methodHash} with the decoded arguments.
 *
 * <pre>
 *  0 common header (see LogRecordLayout), type = 1
 * 24 txId(8)
 * 32 methodHash(8)     64-bit hash of "interface#method(parameter types)"
 * 40 arguments ...     serialized (Kryo), length = length - 40
 * </pre>
 */
public final class SemanticRecordLayout {
    public static final int TX_ID_OFFSET = 24;
    public static final int METHOD_HASH_OFFSET = 32;
    public static final int HEADER_LENGTH = 40;

    private SemanticRecordLayout() {
    }

    /** Encodes a sealed record (padded to the ring alignment). */
    public static byte[] encode(long position, long txId, long methodHash, byte[] args, int argsLength) {
        int length = HEADER_LENGTH + argsLength;
        byte[] r = new byte[LogRecordLayout.alignedLength(length)];
        ByteBuffer b = LogRecordLayout.wrap(r);
        LogRecordLayout.putHeader(b, length, LogRecordLayout.TYPE_SEMANTIC, position);
        b.putLong(TX_ID_OFFSET, txId);
        b.putLong(METHOD_HASH_OFFSET, methodHash);
        System.arraycopy(args, 0, r, HEADER_LENGTH, argsLength);
        LogRecordLayout.seal(r);
        return r;
    }

    public static long txId(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(TX_ID_OFFSET);
    }

    public static long methodHash(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(METHOD_HASH_OFFSET);
    }

    public static byte[] arguments(byte[] r) {
        int length = LogRecordLayout.wrap(r).getInt(LogRecordLayout.LENGTH_OFFSET);
        byte[] args = new byte[length - HEADER_LENGTH];
        System.arraycopy(r, HEADER_LENGTH, args, 0, args.length);
        return args;
    }
}
