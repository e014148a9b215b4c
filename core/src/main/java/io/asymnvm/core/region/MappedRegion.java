package io.asymnvm.core.region;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Objects;

/**
 * A {@link PersistentRegion} over a memory-mapped file.
 *
 * <p>Files larger than one mapping are mapped as consecutive 1 GiB chunks; accesses that cross a chunk
 * boundary are split, atomic 8-byte operations never cross one because they are aligned. With
 * {@link MapMode#DAX} the file is mapped with {@code MAP_SYNC} ({@code ExtendedMapMode.READ_WRITE_SYNC}), so
 * {@link #persist} is a cache-line write-back; the mode is refused with a clear message where the file system
 * does not support it. With {@link MapMode#FILE} persist is an msync of the range.
 */
public final class MappedRegion implements PersistentRegion {

    /** How the file is mapped. */
    public enum MapMode { FILE, DAX }

    static final int CHUNK_SHIFT = 30;
    static final long CHUNK_SIZE = 1L << CHUNK_SHIFT;
    private static final long CHUNK_MASK = CHUNK_SIZE - 1;
    private static final VarHandle LONGS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final Path path;
    private final long size;
    private final MapMode mode;
    private final MappedByteBuffer[] chunks;
    private volatile boolean closed;

    private MappedRegion(Path path, long size, MapMode mode, MappedByteBuffer[] chunks) {
        this.path = path;
        this.size = size;
        this.mode = mode;
        this.chunks = chunks;
    }

    /**
     * Creates (or extends to) {@code size} bytes and maps it. An existing file of a different size is
     * refused: a region never silently changes length.
     */
    public static MappedRegion create(Path path, long size, MapMode mode) {
        Objects.requireNonNull(path, "path");
        if (size <= 0) {
            throw new IllegalArgumentException("region size must be positive: " + size);
        }
        try {
            if (Files.exists(path) && Files.size(path) != 0 && Files.size(path) != size) {
                throw new IllegalArgumentException("PM file " + path + " has size " + Files.size(path)
                        + ", requested " + size + "; refusing to resize an existing image");
            }
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                if (ch.size() < size) {
                    ch.truncate(size);
                    ch.write(ByteBuffer.allocate(1), size - 1);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create PM file " + path, e);
        }
        return open(path, mode);
    }

    /** Maps an existing file in full. */
    public static MappedRegion open(Path path, MapMode mode) {
        Objects.requireNonNull(path, "path");
        FileChannel.MapMode mapMode = mapMode(mode, path);
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size == 0) {
                throw new IllegalArgumentException("PM file " + path + " is empty");
            }
            int n = (int) ((size + CHUNK_SIZE - 1) >>> CHUNK_SHIFT);
            MappedByteBuffer[] chunks = new MappedByteBuffer[n];
            for (int i = 0; i < n; i++) {
                long start = (long) i << CHUNK_SHIFT;
                long len = Math.min(CHUNK_SIZE, size - start);
                try {
                    chunks[i] = ch.map(mapMode, start, len);
                } catch (IOException | UnsupportedOperationException e) {
                    if (mode == MapMode.DAX) {
                        throw new IllegalArgumentException("PM file " + path
                                + " cannot be mapped with MAP_SYNC (DAX): " + e.getMessage()
                                + "; use map mode FILE on a non-DAX file system", e);
                    }
                    throw e;
                }
                chunks[i].order(ByteOrder.LITTLE_ENDIAN);
            }
            return new MappedRegion(path, size, mode, chunks);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map PM file " + path, e);
        }
    }

    private static FileChannel.MapMode mapMode(MapMode mode, Path path) {
        if (mode == MapMode.FILE) {
            return FileChannel.MapMode.READ_WRITE;
        }
        try {
            return jdk.nio.mapmode.ExtendedMapMode.READ_WRITE_SYNC;
        } catch (LinkageError e) {
            throw new IllegalArgumentException("DAX mapping of " + path + " needs module jdk.nio.mapmode", e);
        }
    }

    /**
     * Direct views of {@code [offset, offset + length)}, one per mapping chunk it spans (each at most 1 GiB), in
     * order: what an RDMA NIC registers. The views share the mapping; they stay valid until {@link #close()}.
     */
    public java.util.List<ByteBuffer> slices(long offset, long length) {
        check(offset, length);
        java.util.List<ByteBuffer> out = new java.util.ArrayList<>();
        long at = offset;
        long end = offset + length;
        while (at < end) {
            int pos = (int) (at & CHUNK_MASK);
            int n = (int) Math.min(CHUNK_SIZE - pos, end - at);
            out.add(chunk(at).slice(pos, n).order(ByteOrder.LITTLE_ENDIAN));
            at += n;
        }
        return out;
    }

    @Override
    public String name() {
        return path.toString();
    }

    @Override
    public long size() {
        return size;
    }

    private void check(long offset, long length) {
        if (closed) {
            throw new IllegalStateException("region closed: " + path);
        }
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + (offset + length)
                    + ") outside region " + path + " of size " + size);
        }
    }

    private void checkAligned(long offset) {
        check(offset, 8);
        if ((offset & 7) != 0) {
            throw new IllegalArgumentException("atomic access at unaligned offset " + offset + " (needs 8-byte alignment)");
        }
    }

    private ByteBuffer chunk(long offset) {
        return chunks[(int) (offset >>> CHUNK_SHIFT)];
    }

    @Override
    public void read(long offset, byte[] dst, int dstOffset, int length) {
        Objects.checkFromIndexSize(dstOffset, length, dst.length);
        check(offset, length);
        while (length > 0) {
            int pos = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - pos);
            chunk(offset).get(pos, dst, dstOffset, n);
            offset += n;
            dstOffset += n;
            length -= n;
        }
    }

    @Override
    public void write(long offset, byte[] src, int srcOffset, int length) {
        Objects.checkFromIndexSize(srcOffset, length, src.length);
        check(offset, length);
        while (length > 0) {
            int pos = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - pos);
            chunk(offset).put(pos, src, srcOffset, n);
            offset += n;
            srcOffset += n;
            length -= n;
        }
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        int length = src.remaining();
        check(offset, length);
        while (length > 0) {
            int pos = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - pos);
            ByteBuffer slice = src.slice(src.position(), n);
            chunk(offset).put(pos, slice, 0, n);
            src.position(src.position() + n);
            offset += n;
            length -= n;
        }
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        int length = dst.remaining();
        check(offset, length);
        while (length > 0) {
            int pos = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - pos);
            dst.put(dst.position(), chunk(offset), pos, n);
            dst.position(dst.position() + n);
            offset += n;
            length -= n;
        }
    }

    @Override
    public long getLong(long offset) {
        check(offset, 8);
        if ((offset & CHUNK_MASK) <= CHUNK_SIZE - 8) {
            return chunk(offset).getLong((int) (offset & CHUNK_MASK));
        }
        byte[] b = read(offset, 8);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Override
    public void putLong(long offset, long value) {
        check(offset, 8);
        if ((offset & CHUNK_MASK) <= CHUNK_SIZE - 8) {
            chunk(offset).putLong((int) (offset & CHUNK_MASK), value);
            return;
        }
        byte[] b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
        write(offset, b, 0, 8);
    }

    @Override
    public int getInt(long offset) {
        check(offset, 4);
        if ((offset & CHUNK_MASK) <= CHUNK_SIZE - 4) {
            return chunk(offset).getInt((int) (offset & CHUNK_MASK));
        }
        return ByteBuffer.wrap(read(offset, 4)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    }

    @Override
    public void putInt(long offset, int value) {
        check(offset, 4);
        if ((offset & CHUNK_MASK) <= CHUNK_SIZE - 4) {
            chunk(offset).putInt((int) (offset & CHUNK_MASK), value);
            return;
        }
        write(offset, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(value).array(), 0, 4);
    }

    @Override
    public long getLongVolatile(long offset) {
        checkAligned(offset);
        return (long) LONGS.getVolatile(chunk(offset), (int) (offset & CHUNK_MASK));
    }

    @Override
    public void putLongVolatile(long offset, long value) {
        checkAligned(offset);
        LONGS.setVolatile(chunk(offset), (int) (offset & CHUNK_MASK), value);
    }

    @Override
    public boolean compareAndSetLong(long offset, long expected, long update) {
        checkAligned(offset);
        return LONGS.compareAndSet(chunk(offset), (int) (offset & CHUNK_MASK), expected, update);
    }

    @Override
    public long getAndAddLong(long offset, long delta) {
        checkAligned(offset);
        return (long) LONGS.getAndAdd(chunk(offset), (int) (offset & CHUNK_MASK), delta);
    }

    @Override
    public void persist(long offset, long length) {
        check(offset, length);
        while (length > 0) {
            int pos = (int) (offset & CHUNK_MASK);
            int n = (int) Math.min(length, CHUNK_SIZE - pos);
            ((MappedByteBuffer) chunk(offset)).force(pos, n);
            offset += n;
            length -= n;
        }
    }

    /**
     * {@link MapMode#FILE}: one msync of the span from the first range's start to the last one's end (per mapping
     * chunk it crosses) instead of one per range. The kernel writes back only the dirty pages inside the span,
     * found through the page cache's dirty tags, and a file system on a block device ends each msync with a device
     * cache flush: a replayed redo batch touching a hundred scattered ranges cost a hundred flushes, now one.
     * Pages of the span dirtied by others are written back too, which is harmless. {@link MapMode#DAX}: a
     * write-back covers every line of its range, so each range is persisted on its own.
     */
    @Override
    public void persistRanges(long[] starts, long[] ends, int count) {
        if (count < 0 || count > starts.length || count > ends.length) {
            throw new IllegalArgumentException("range count " + count + " outside [0, " + Math.min(starts.length,
                    ends.length) + "] (the arrays' lengths)");
        }
        if (count <= 1 || mode == MapMode.DAX) {
            PersistentRegion.super.persistRanges(starts, ends, count);
            return;
        }
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        for (int i = 0; i < count; i++) {
            if (ends[i] < starts[i]) {
                throw new IllegalArgumentException("range " + i + " ends at " + ends[i] + " before its start "
                        + starts[i]);
            }
            from = Math.min(from, starts[i]);
            to = Math.max(to, ends[i]);
        }
        persist(from, to - from);
    }

    @Override
    public void zero(long offset, long length) {
        check(offset, length);
        byte[] zeros = new byte[(int) Math.min(length, 1 << 16)];
        while (length > 0) {
            int n = (int) Math.min(length, zeros.length);
            write(offset, zeros, 0, n);
            offset += n;
            length -= n;
        }
    }

    @Override
    public void close() {
        closed = true;
        Arrays.fill(chunks, null);
    }

    @Override
    public String toString() {
        return "MappedRegion[" + path + ", " + size + " bytes]";
    }
}
