package io.asymnvm.core.region;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A {@link PersistentRegion} held in a Java array: volatile memory with the region contract, for snapshots of
 * remote memory (a fetched log ring) and as the base of simulated PM in crash tests. {@link #persist} does
 * nothing here; subclasses may track it. Regions up to 2 GiB.
 */
public class ByteArrayRegion implements PersistentRegion {
    private final String name;
    protected final byte[] bytes;
    private final ByteBuffer buffer;

    public ByteArrayRegion(String name, int size) {
        this(name, new byte[size]);
    }

    public ByteArrayRegion(String name, byte[] contents) {
        this.name = Objects.requireNonNull(name, "name");
        this.bytes = contents;
        this.buffer = ByteBuffer.wrap(contents).order(ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long size() {
        return bytes.length;
    }

    protected void check(long offset, long length) {
        if (offset < 0 || length < 0 || offset > bytes.length - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + (offset + length) + ") outside region "
                    + name + " of size " + bytes.length);
        }
    }

    private void checkAligned(long offset) {
        check(offset, 8);
        if ((offset & 7) != 0) {
            throw new IllegalArgumentException("atomic access at unaligned offset " + offset
                    + " (needs 8-byte alignment)");
        }
    }

    /** Called before every store to {@code [offset, offset + length)}; lets subclasses track dirty lines. */
    protected void beforeStore(long offset, long length) {
    }

    @Override
    public void read(long offset, byte[] dst, int dstOffset, int length) {
        check(offset, length);
        System.arraycopy(bytes, (int) offset, dst, dstOffset, length);
    }

    @Override
    public void write(long offset, byte[] src, int srcOffset, int length) {
        check(offset, length);
        beforeStore(offset, length);
        System.arraycopy(src, srcOffset, bytes, (int) offset, length);
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        int length = src.remaining();
        check(offset, length);
        beforeStore(offset, length);
        src.get(bytes, (int) offset, length);
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        int length = dst.remaining();
        check(offset, length);
        dst.put(bytes, (int) offset, length);
    }

    @Override
    public synchronized long getLong(long offset) {
        check(offset, 8);
        return buffer.getLong((int) offset);
    }

    @Override
    public synchronized void putLong(long offset, long value) {
        check(offset, 8);
        beforeStore(offset, 8);
        buffer.putLong((int) offset, value);
    }

    @Override
    public synchronized int getInt(long offset) {
        check(offset, 4);
        return buffer.getInt((int) offset);
    }

    @Override
    public synchronized void putInt(long offset, int value) {
        check(offset, 4);
        beforeStore(offset, 4);
        buffer.putInt((int) offset, value);
    }

    @Override
    public synchronized long getLongVolatile(long offset) {
        checkAligned(offset);
        return buffer.getLong((int) offset);
    }

    @Override
    public synchronized void putLongVolatile(long offset, long value) {
        checkAligned(offset);
        beforeStore(offset, 8);
        buffer.putLong((int) offset, value);
    }

    @Override
    public synchronized boolean compareAndSetLong(long offset, long expected, long update) {
        checkAligned(offset);
        if (buffer.getLong((int) offset) != expected) {
            return false;
        }
        beforeStore(offset, 8);
        buffer.putLong((int) offset, update);
        return true;
    }

    @Override
    public synchronized long getAndAddLong(long offset, long delta) {
        checkAligned(offset);
        long v = buffer.getLong((int) offset);
        beforeStore(offset, 8);
        buffer.putLong((int) offset, v + delta);
        return v;
    }

    @Override
    public void persist(long offset, long length) {
        check(offset, length);
    }

    @Override
    public void zero(long offset, long length) {
        check(offset, length);
        beforeStore(offset, length);
        java.util.Arrays.fill(bytes, (int) offset, (int) (offset + length), (byte) 0);
    }

    @Override
    public void close() {
    }
}
