package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A DRAM working copy of a persistent block (a node page or a root block) inside one structure operation, with
 * the byte ranges changed so far. {@link #flush(Transaction)} writes only those ranges to the transaction, so an
 * insert into a node logs the record, the shifted slots and the header, not the page. Ranges closer than
 * {@link #MERGE_GAP} bytes are merged (a redo write entry costs a 16-byte header). Little-endian.
 */
final class Block {
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class,
            ByteOrder.LITTLE_ENDIAN);
    static final int MERGE_GAP = 16;
    private static final int MAX_RANGES = 8;

    final long address;
    /**
     * The block's bytes. While {@link #shared} they are the transaction's own page (read without a copy) and are
     * only read; the first change copies them ({@link #own()}). A shared block may be a slice of its page (a root
     * block inside a page): its bytes start at {@link #base} of the array then; code reading {@code bytes}
     * directly works on node pages, which are never slices.
     */
    byte[] bytes;
    private boolean shared;
    /**
     * The shared array {@link #bytes} was copied from at the last {@link #own()} of a whole page (null if the block
     * never shared one, or was a slice): a transaction may then take the copy as its page instead of copying it
     * again ({@link Transaction#writeChanged}).
     */
    private byte[] origin;
    /** Where the block starts in {@link #bytes}: 0 except for a shared slice, until its first change. */
    private int base;
    /** The block's length in bytes. */
    private final int length;
    /** The structure the block belongs to, for corruption reports (null if unknown). */
    String owner;
    /** The changed ranges; made at the first change (a block only read, as on every get, never needs them). */
    private int[] lo;
    private int[] hi;
    private int ranges;

    Block(long address, byte[] bytes) {
        this.address = address;
        this.bytes = bytes;
        this.length = bytes.length;
    }

    private Block(long address, byte[] page, int base, int length) {
        this.address = address;
        this.bytes = page;
        this.base = base;
        this.length = length;
        this.shared = true;
    }

    /** A block over bytes the transaction shares ({@link Transaction#readShared}): copied before any change. */
    static Block shared(long address, byte[] bytes) {
        Block b = new Block(address, bytes);
        b.shared = true;
        return b;
    }

    /**
     * A block of {@code length} bytes at {@code base} of a page the transaction shares (a root block read without
     * a copy on every operation): only its own bytes are copied, at its first change.
     */
    static Block sharedSlice(long address, byte[] page, int base, int length) {
        if (base < 0 || length < 0 || base > page.length - length) {
            throw new IllegalArgumentException("block of " + length + " bytes at " + base + " outside a page of "
                    + page.length + " bytes");
        }
        return new Block(address, page, base, length);
    }

    /** The block's length in bytes. */
    int length() {
        return length;
    }

    /** Makes {@link #bytes} this block's own copy; every change, and code writing {@code bytes} directly, calls it. */
    void own() {
        if (shared) {
            if (base == 0 && length == bytes.length) {
                origin = bytes;
                bytes = bytes.clone();
            } else {
                bytes = java.util.Arrays.copyOfRange(bytes, base, base + length);
                base = 0;
            }
            shared = false;
        }
    }

    /**
     * The block's bytes starting at index 0, for code that reads {@code bytes} with block offsets (header checks):
     * a slice is copied first.
     */
    byte[] bytesFromZero() {
        if (base != 0 || length != bytes.length) {
            own();
        }
        return bytes;
    }

    long getLong(int offset) {
        return (long) LONG.get(bytes, base + offset);
    }

    void putLong(int offset, long value) {
        own();
        LONG.set(bytes, offset, value);
        markDirty(offset, offset + 8);
    }

    int getInt(int offset) {
        return (int) INT.get(bytes, base + offset);
    }

    void putInt(int offset, int value) {
        own();
        INT.set(bytes, offset, value);
        markDirty(offset, offset + 4);
    }

    /** Unsigned 16-bit value. */
    int getShort(int offset) {
        return (short) SHORT.get(bytes, base + offset) & 0xFFFF;
    }

    void putShort(int offset, int value) {
        own();
        SHORT.set(bytes, offset, (short) value);
        markDirty(offset, offset + 2);
    }

    int getByte(int offset) {
        return bytes[base + offset];
    }

    void putByte(int offset, int value) {
        own();
        bytes[offset] = (byte) value;
        markDirty(offset, offset + 1);
    }

    void putBytes(int offset, byte[] src, int srcOffset, int length) {
        own();
        System.arraycopy(src, srcOffset, bytes, offset, length);
        markDirty(offset, offset + length);
    }

    boolean isDirty() {
        return ranges > 0;
    }

    /** Records that {@code [from, to)} changed. */
    void markDirty(int from, int to) {
        if (from >= to) {
            return;
        }
        own();
        if (lo == null) {
            lo = new int[MAX_RANGES];
            hi = new int[MAX_RANGES];
        }
        int i = 0;
        while (i < ranges && hi[i] + MERGE_GAP < from) {
            i++;
        }
        int j = i;
        int newLo = from;
        int newHi = to;
        while (j < ranges && lo[j] <= to + MERGE_GAP) {
            newLo = Math.min(newLo, lo[j]);
            newHi = Math.max(newHi, hi[j]);
            j++;
        }
        int removed = j - i;
        if (removed == 0) {
            if (ranges == MAX_RANGES) {
                lo[0] = Math.min(lo[0], newLo);
                hi[0] = Math.max(hi[ranges - 1], newHi);
                ranges = 1;
                return;
            }
            System.arraycopy(lo, i, lo, i + 1, ranges - i);
            System.arraycopy(hi, i, hi, i + 1, ranges - i);
            ranges++;
        } else if (removed > 1) {
            System.arraycopy(lo, j, lo, i + 1, ranges - j);
            System.arraycopy(hi, j, hi, i + 1, ranges - j);
            ranges -= removed - 1;
        }
        lo[i] = newLo;
        hi[i] = newHi;
    }

    /** Bytes the dirty ranges cover. */
    int dirtyBytes() {
        int n = 0;
        for (int i = 0; i < ranges; i++) {
            n += hi[i] - lo[i];
        }
        return n;
    }

    /**
     * Writes the dirty ranges to {@code tx} and forgets them. A block copied from a shared page hands its copy to
     * the transaction, which may keep it as its page (then the block shares it again: the next change copies).
     */
    void flush(Transaction tx) {
        if (ranges == 0) {
            return;
        }
        if (origin != null && !shared) {
            if (tx.writeChanged(address, bytes, origin, lo, hi, ranges)) {
                shared = true;
                origin = null;
            }
        } else {
            for (int i = 0; i < ranges; i++) {
                tx.write(address + lo[i], bytes, lo[i], hi[i] - lo[i]);
            }
        }
        ranges = 0;
    }
}
