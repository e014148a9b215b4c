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
        byte[] r = allocate(argsLength);
        System.arraycopy(args, 0, r, HEADER_LENGTH, argsLength);
        finish(r, position, txId, methodHash);
        return r;
    }

    /**
     * A record image for {@code argsLength} argument bytes, padded to the ring alignment, with only its length
     * set: the caller puts the arguments at {@link #HEADER_LENGTH} and {@link #finish}es it when it is posted. A
     * frontend encodes a call's arguments straight into the record it will log, so one array holds them.
     */
    public static byte[] allocate(int argsLength) {
        if (argsLength < 0) {
            throw new IllegalArgumentException("arguments length negative: " + argsLength);
        }
        int length = HEADER_LENGTH + argsLength;
        byte[] r = new byte[LogRecordLayout.alignedLength(length)];
        LogRecordLayout.wrap(r).putInt(LogRecordLayout.LENGTH_OFFSET, length);
        return r;
    }

    /**
     * Fills the header of a record made by {@link #allocate} (its arguments in place) for ring position
     * {@code position} and seals it; the bytes are then those {@link #encode} gives for the same values.
     */
    public static void finish(byte[] r, long position, long txId, long methodHash) {
        ByteBuffer b = LogRecordLayout.wrap(r);
        LogRecordLayout.putHeader(b, LogRecordLayout.length(r), LogRecordLayout.TYPE_SEMANTIC, position);
        b.putLong(TX_ID_OFFSET, txId);
        b.putLong(METHOD_HASH_OFFSET, methodHash);
        LogRecordLayout.seal(r);
    }

    /** How many argument bytes the record holds (at {@link #HEADER_LENGTH}); also of one not finished yet. */
    public static int argumentsLength(byte[] r) {
        return LogRecordLayout.length(r) - HEADER_LENGTH;
    }

    public static long txId(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(TX_ID_OFFSET);
    }

    public static long methodHash(byte[] r) {
        return LogRecordLayout.wrap(r).getLong(METHOD_HASH_OFFSET);
    }

    public static byte[] arguments(byte[] r) {
        byte[] args = new byte[argumentsLength(r)];
        System.arraycopy(r, HEADER_LENGTH, args, 0, args.length);
        return args;
    }
}
