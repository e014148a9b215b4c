package io.asymnvm.frontend;

import io.asymnvm.frontend.tx.TransactionContext;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The running persistent transaction, seen from inside a {@link PersistentTransaction} method. Addresses are
 * heap offsets on the backend (0 is never a valid block, so it serves as null). Reads see this transaction's own
 * writes first, then every earlier transaction of this frontend. Writes are private until the method returns
 * normally. Only the thread running the method may use it.
 */
public interface Transaction {

    /** The transaction running on this thread. */
    static Transaction current() {
        return TransactionContext.current();
    }

    /** The little-endian long at {@code address}. */
    default long readLong(long address) {
        return ByteBuffer.wrap(read(address, 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    /** Writes {@code value} little-endian at {@code address}. */
    default void writeLong(long address, long value) {
        write(address, ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array());
    }

    /** The little-endian int at {@code address}. */
    default int readInt(long address) {
        return ByteBuffer.wrap(read(address, 4)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    /** Writes {@code value} little-endian at {@code address}. */
    default void writeInt(long address, int value) {
        write(address, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array());
    }

    /**
     * {@code [address, address + length)} as {@link #read(long, int)} gives it, but without a copy where the
     * transaction can share its own view: when the range is exactly one page (page-aligned, the page size long) the
     * array returned may be the transaction's page itself. The caller must never change it, and must not keep it past
     * the operation it reads it for (a later write of this transaction, or a later transaction, may replace it).
     * Structures read whole node pages this way and copy a page only when they change it.
     */
    default byte[] readShared(long address, int length) {
        return read(address, length);
    }

    /** {@code length} bytes from {@code address}. */
    default byte[] read(long address, int length) {
        byte[] out = new byte[length];
        read(address, out, 0, length);
        return out;
    }

    void read(long address, byte[] dst, int offset, int length);

    void write(long address, byte[] src, int offset, int length);

    default void write(long address, byte[] src) {
        write(address, src, 0, src.length);
    }

    /**
     * Writes the ranges {@code [from[i], to[i])} ({@code i < ranges}) of {@code image}, a changed copy of the bytes at
     * {@code address} that {@link #readShared} returned as {@code origin}, as {@link #write} of each range would. A
     * transaction may instead take {@code image} as its own copy of the page (no second copy of a changed page,
     * issue 8): then it returns true and the caller must treat {@code image} as shared from now on (copy it before
     * any further change). It does so only where that is the same as writing the ranges: {@code image} is one
     * whole page, {@code origin} is still this transaction's view of it, and {@code image} differs from
     * {@code origin} only inside the ranges.
     */
    default boolean writeChanged(long address, byte[] image, byte[] origin, int[] from, int[] to, int ranges) {
        for (int i = 0; i < ranges; i++) {
            write(address + from[i], image, from[i], to[i] - from[i]);
        }
        return false;
    }

    /** Allocates a zeroed block of at least {@code size} bytes in this frontend's slabs. */
    long allocate(long size);

    /** Frees a block returned by {@link #allocate(long)}; freeing anything else is refused. */
    void free(long address);

    /**
     * A hint that the page holding {@code address} is worth keeping in the frontend's DRAM cache longer than
     * ordinary pages (B+tree inner nodes). Changes nothing that any read returns.
     */
    default void preferCached(long address) {
    }

    /**
     * Whether this attempt has met a page that is not cached yet and reads it as zeros: it will be discarded and
     * run again once the pages it met are fetched, all in one batch. A structure may then treat a node that fails
     * its checks as empty instead of reporting corruption, so that the attempt goes on and meets the other pages
     * it needs (a multi-key read then costs two runs, not one per cold page). Always false for a transaction
     * whose reads are all real.
     */
    default boolean doomed() {
        return false;
    }

    /** This frontend's root address (0 if never set). */
    long root();

    void setRoot(long address);
}
