package io.asymnvm.backend.image;

import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;

import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link PersistentRegion} that forwards everything to another region and counts the bytes each
 * {@link #persist} call writes back, and the bytes stored by {@code write} calls, by the area of the image they fall
 * in ({@link Kind}): what write amplification is measured from ({@code bench puts}, issue 8 goal 7). Start a node over it with
 * {@code BackendNode.start(config, new PersistCountingRegion(region))}, then {@link #classify} with the node's
 * superblock; until then every persist counts as {@link Kind#OTHER} (formatting, start-up recovery).
 *
 * <p>Persisted bytes are the lengths the backend asks to write back (a replayed heap range is widened to whole
 * 64-byte lines; a redo batch is persisted once, by the frontend's FLUSH or by the replayer, whichever comes first:
 * the other finds it durable); written bytes are what
 * reached the media through {@code write} (8-byte stores and zeroing are not counted). A persist or write is
 * attributed to the area its first byte falls in (no persist of the backend spans two areas).
 * Thread-safe: counters are {@link LongAdder}s, persists come from the replayer, NIC threads and control calls.
 * {@link #close()} closes the wrapped region.
 */
public final class PersistCountingRegion implements PersistentRegion {
    /** The areas of an image, as DESIGN §2 names them. */
    public enum Kind {
        /** Frontends' redo rings (the batch WRITE's FLUSH, or the replayer's persist if it came first). */
        REDO,
        /** Frontends' semantic rings (the commit record's FLUSH). */
        SEMANTIC,
        /** The heap: slabs the replayer applies redo to (and slab headers at grant time). */
        HEAP,
        /** Everything else: superblock, slab table, control blocks (checkpoints, durable watermarks). */
        OTHER
    }

    private final PersistentRegion delegate;
    private final LongAdder[] bytes = new LongAdder[Kind.values().length];
    private final LongAdder[] calls = new LongAdder[Kind.values().length];
    private final LongAdder[] written = new LongAdder[Kind.values().length];
    /** Write-back calls made on the wrapped region: one per {@link #persist}, one per {@link #persistRanges}. */
    private final LongAdder syncs = new LongAdder();
    private volatile Superblock layout;

    public PersistCountingRegion(PersistentRegion delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = new LongAdder();
            calls[i] = new LongAdder();
            written[i] = new LongAdder();
        }
    }

    /** Attributes later persists to areas of {@code sb}'s geometry (the superblock of the node serving this). */
    public void classify(Superblock sb) {
        this.layout = Objects.requireNonNull(sb, "sb");
    }

    /** Bytes persisted in {@code kind}'s area so far. */
    public long persistedBytes(Kind kind) {
        return bytes[kind.ordinal()].sum();
    }

    /** Bytes stored by {@code write} calls in {@code kind}'s area so far. */
    public long writtenBytes(Kind kind) {
        return written[kind.ordinal()].sum();
    }

    /**
     * Write-back calls made on the wrapped region so far, all areas: each {@link #persist} and each
     * {@link #persistRanges} counts one. On a file on a block device each is an msync, which ends with a device
     * cache flush, so this is the count of flushes the backend paid.
     */
    public long syncs() {
        return syncs.sum();
    }

    /** Persist calls in {@code kind}'s area so far (a range of {@link #persistRanges} counts as one). */
    public long persistCalls(Kind kind) {
        return calls[kind.ordinal()].sum();
    }

    /** The area {@code offset} lies in under the current classification. */
    public Kind kindOf(long offset) {
        Superblock sb = layout;
        if (sb == null) {
            return Kind.OTHER;
        }
        if (offset >= sb.heapOffset() && offset < sb.heapOffset() + sb.slabCount() * sb.slabSize()) {
            return Kind.HEAP;
        }
        long fromLogs = offset - sb.logAreaOffset();
        if (fromLogs < 0 || fromLogs >= sb.logAreaStride() * sb.maxFrontends()) {
            return Kind.OTHER;
        }
        long inArea = fromLogs % sb.logAreaStride(); // control page, semantic ring, redo ring (SuperblockLayout)
        if (inArea < sb.pageSize()) {
            return Kind.OTHER;
        }
        return inArea < sb.pageSize() + sb.semRingCapacity() ? Kind.SEMANTIC : Kind.REDO;
    }

    @Override
    public void persist(long offset, long length) {
        delegate.persist(offset, length);
        syncs.increment();
        int k = kindOf(offset).ordinal();
        bytes[k].add(length);
        calls[k].increment();
    }

    /** Counts each range as {@link #persist} would, then lets the delegate persist them its way. */
    @Override
    public void persistRanges(long[] starts, long[] ends, int count) {
        delegate.persistRanges(starts, ends, count);
        syncs.increment();
        for (int i = 0; i < count; i++) {
            int k = kindOf(starts[i]).ordinal();
            bytes[k].add(ends[i] - starts[i]);
            calls[k].increment();
        }
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public long size() {
        return delegate.size();
    }

    @Override
    public void read(long offset, byte[] dst, int dstOffset, int length) {
        delegate.read(offset, dst, dstOffset, length);
    }

    @Override
    public void write(long offset, byte[] src, int srcOffset, int length) {
        delegate.write(offset, src, srcOffset, length);
        written[kindOf(offset).ordinal()].add(length);
    }

    @Override
    public void write(long offset, ByteBuffer src) {
        int length = src.remaining();
        delegate.write(offset, src);
        written[kindOf(offset).ordinal()].add(length);
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        delegate.read(offset, dst);
    }

    @Override
    public long getLong(long offset) {
        return delegate.getLong(offset);
    }

    @Override
    public void putLong(long offset, long value) {
        delegate.putLong(offset, value);
    }

    @Override
    public int getInt(long offset) {
        return delegate.getInt(offset);
    }

    @Override
    public void putInt(long offset, int value) {
        delegate.putInt(offset, value);
    }

    @Override
    public long getLongVolatile(long offset) {
        return delegate.getLongVolatile(offset);
    }

    @Override
    public void putLongVolatile(long offset, long value) {
        delegate.putLongVolatile(offset, value);
    }

    @Override
    public boolean compareAndSetLong(long offset, long expected, long update) {
        return delegate.compareAndSetLong(offset, expected, update);
    }

    @Override
    public long getAndAddLong(long offset, long delta) {
        return delegate.getAndAddLong(offset, delta);
    }

    @Override
    public void zero(long offset, long length) {
        delegate.zero(offset, length);
    }

    @Override
    public byte[] read(long offset, int length) {
        return delegate.read(offset, length);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "PersistCountingRegion[" + delegate + "]";
    }
}
