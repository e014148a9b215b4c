package io.asymnvm.core.region;

import java.nio.ByteBuffer;

/**
 * A range of persistent memory addressed by byte offsets from zero to {@link #size()}.
 *
 * <p>Stores become durable only after {@link #persist(long, long)} covers them. Every access is
 * bounds-checked; 8-byte atomic operations require 8-byte aligned offsets. All multi-byte values are
 * little-endian. Implementations are thread-safe for disjoint ranges; callers order conflicting accesses.
 */
public interface PersistentRegion extends AutoCloseable {

    /** Human-readable identity (file path) used in error messages. */
    String name();

    long size();

    void read(long offset, byte[] dst, int dstOffset, int length);

    void write(long offset, byte[] src, int srcOffset, int length);

    /** Writes all remaining bytes of {@code src} at {@code offset}, advancing its position. */
    void write(long offset, ByteBuffer src);

    /** Reads {@code dst.remaining()} bytes at {@code offset} into {@code dst}, advancing its position. */
    void read(long offset, ByteBuffer dst);

    long getLong(long offset);

    void putLong(long offset, long value);

    int getInt(long offset);

    void putInt(long offset, int value);

    long getLongVolatile(long offset);

    void putLongVolatile(long offset, long value);

    boolean compareAndSetLong(long offset, long expected, long update);

    long getAndAddLong(long offset, long delta);

    /** Makes {@code [offset, offset + length)} durable (cache-line write-back on DAX, msync otherwise). */
    void persist(long offset, long length);

    /**
     * Makes every range {@code [starts[i], ends[i])}, {@code i < count}, durable: the guarantee of calling
     * {@link #persist} on each. The ranges are sorted by start and do not overlap. An implementation may persist
     * more than asked at once where one write-back of a covering range is cheaper than one per range: an msync
     * of a file on a block device ends with one device cache flush per call, whatever the number of dirty pages.
     */
    default void persistRanges(long[] starts, long[] ends, int count) {
        for (int i = 0; i < count; i++) {
            persist(starts[i], ends[i] - starts[i]);
        }
    }

    /** Zeroes a range (not persisted). */
    void zero(long offset, long length);

    @Override
    void close();

    default byte[] read(long offset, int length) {
        byte[] out = new byte[length];
        read(offset, out, 0, length);
        return out;
    }
}
