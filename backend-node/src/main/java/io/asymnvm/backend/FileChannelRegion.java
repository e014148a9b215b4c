package io.asymnvm.backend;

import io.asymnvm.core.region.PersistentRegion;

import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A read-only {@link PersistentRegion} over positional reads of a file channel opened for reading only, for
 * {@link InspectTool}: nothing is mapped, locked or written, so it is safe beside a running backend, and a file
 * that shrinks while it is read fails with an exception instead of a SIGBUS. Every store throws
 * {@link UnsupportedOperationException}.
 */
final class FileChannelRegion implements PersistentRegion {
    private final FileChannel channel;
    private final String name;
    private final long size;

    private FileChannelRegion(FileChannel channel, String name, long size) {
        this.channel = channel;
        this.name = name;
        this.size = size;
    }

    /** Opens {@code file} for reading; {@link #name()} is its absolute path, as the backend names its regions. */
    static FileChannelRegion open(Path file) {
        Path absolute = file.toAbsolutePath();
        try {
            FileChannel ch = FileChannel.open(absolute, StandardOpenOption.READ);
            return new FileChannelRegion(ch, absolute.toString(), ch.size());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open PM file " + absolute + " for reading", e);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public void read(long offset, byte[] dst, int dstOffset, int length) {
        read(offset, ByteBuffer.wrap(dst, dstOffset, length));
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        int length = dst.remaining();
        if (offset < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("read [" + offset + ", " + (offset + length) + ") outside " + name
                    + " of " + size + " bytes");
        }
        try {
            long at = offset;
            while (dst.hasRemaining()) {
                int n = channel.read(dst, at);
                if (n < 0) {
                    throw new EOFException(name + " ended at " + at + " while reading [" + offset + ", "
                            + (offset + length) + "): the file shrank while it was read");
                }
                at += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + name + " at offset " + offset, e);
        }
    }

    @Override
    public long getLong(long offset) {
        ByteBuffer b = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        read(offset, b);
        return b.getLong(0);
    }

    @Override
    public int getInt(long offset) {
        ByteBuffer b = ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        read(offset, b);
        return b.getInt(0);
    }

    @Override
    public long getLongVolatile(long offset) {
        return getLong(offset);
    }

    @Override
    public void write(long offset, byte[] src, int srcOffset, int length) {
        throw readOnly();
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        throw readOnly();
    }

    @Override
    public void putLong(long offset, long value) {
        throw readOnly();
    }

    @Override
    public void putInt(long offset, int value) {
        throw readOnly();
    }

    @Override
    public void putLongVolatile(long offset, long value) {
        throw readOnly();
    }

    @Override
    public boolean compareAndSetLong(long offset, long expected, long update) {
        throw readOnly();
    }

    @Override
    public long getAndAddLong(long offset, long delta) {
        throw readOnly();
    }

    @Override
    public void persist(long offset, long length) {
        throw readOnly();
    }

    @Override
    public void zero(long offset, long length) {
        throw readOnly();
    }

    private UnsupportedOperationException readOnly() {
        return new UnsupportedOperationException(name + " is open read-only");
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close " + name, e);
        }
    }
}
