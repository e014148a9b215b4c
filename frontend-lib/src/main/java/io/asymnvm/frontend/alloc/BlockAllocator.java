package io.asymnvm.frontend.alloc;

import io.asymnvm.core.CorruptRecordException;

import io.asymnvm.core.layout.SlabHeaderLayout;
import io.asymnvm.frontend.Transaction;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The frontend's block allocator inside its slabs (DESIGN §6). All metadata (bump pointer, per-class free
 * lists, block headers, the root word) lives in the slab headers in PM and changes only through the running
 * transaction's writes, so it is exactly as durable and as atomic as the data it allocates: after replay it is
 * consistent, and no heap scan is ever needed. The DRAM state here (which slabs are owned, which one to try
 * first) is a cache rebuilt from the backend on attach.
 *
 * <p>Each slab header also counts its allocated blocks (through the same redo). A free that leaves a slab other
 * than the first without blocks tells the engine, which may <em>retire</em> the slab (no allocation in it, no
 * write to it) and later return it to the backend; a retired slab is taken back into use rather than asking for a
 * grant. The first slab holds the root and directory words and is never retired.
 *
 * <p>Segregated size classes, powers of two from {@value SlabHeaderLayout#MIN_BLOCK} bytes. When no owned slab
 * has room, the transaction is abandoned with a request for a new slab, granted by the backend outside the
 * execution lock, and the method runs again.
 */
public final class BlockAllocator {
    private final long slabSize;
    private final List<Long> slabs = new ArrayList<>();
    private final Set<Long> slabIndexes = new HashSet<>();
    /** Slabs taken out of use on their way back to the backend: still cached, never allocated in or written. */
    private final Set<Long> retired = new HashSet<>();
    private final Runnable needSlab;
    private final java.util.function.LongConsumer emptied;
    private int hint;
    /**
     * The first slab's address (-1 if none), published for {@link #root} and {@link #directory}, which lockless
     * read-only transactions call without the execution lock while a grant may change {@code slabs}.
     */
    private volatile long firstSlabAddress = -1;

    /** {@code needSlab} must throw (it abandons the attempt). */
    public BlockAllocator(long slabSize, long[] ownedSlabs, Runnable needSlab) {
        this(slabSize, ownedSlabs, needSlab, s -> { });
    }

    /**
     * {@code emptied} hears of every slab (other than the first) whose last allocated block a running attempt
     * frees; the attempt may still be abandoned, so it is a hint to check later, never a decision.
     */
    public BlockAllocator(long slabSize, long[] ownedSlabs, Runnable needSlab,
                          java.util.function.LongConsumer emptied) {
        this.slabSize = slabSize;
        this.needSlab = needSlab;
        this.emptied = emptied;
        for (long s : ownedSlabs) {
            addSlab(s);
        }
    }

    public void addSlab(long slabIndex) {
        retired.remove(slabIndex);
        if (slabIndexes.add(slabIndex)) {
            slabs.add(slabIndex * slabSize);
            slabs.sort(Long::compare);
            hint = slabs.indexOf(slabIndex * slabSize);
            firstSlabAddress = slabs.get(0);
        }
    }

    /** The first (lowest) slab: it holds the root and directory words and is never returned. -1 if none. */
    public long firstSlab() {
        return slabs.isEmpty() ? -1 : slabs.get(0) / slabSize;
    }

    /** Whether new blocks may be allocated in the slab (owned, not retired). */
    public boolean inUse(long slabIndex) {
        return slabIndexes.contains(slabIndex);
    }

    /**
     * Takes an owned slab (not the first) out of use: no block is allocated in it and no write reaches it until
     * it is returned ({@link #dropRetired}) or taken back into use ({@link #addSlab}). Its pages stay cacheable.
     */
    public void retire(long slabIndex) {
        if (slabIndex == firstSlab() || !slabIndexes.remove(slabIndex)) {
            throw new IllegalStateException("slab " + slabIndex + " is not a retirable slab of this frontend");
        }
        slabs.remove(Long.valueOf(slabIndex * slabSize));
        firstSlabAddress = slabs.isEmpty() ? -1 : slabs.get(0);
        retired.add(slabIndex);
        hint = 0;
    }

    /** Forgets a retired slab (it is being returned): its memory is no longer this frontend's. */
    public boolean dropRetired(long slabIndex) {
        return retired.remove(slabIndex);
    }

    /** A retired slab to take back into use instead of asking for a grant, or -1. */
    public long anyRetired() {
        return retired.isEmpty() ? -1 : retired.iterator().next();
    }

    /** Whether the page range may be cached: owned slabs, in use or retired but not yet returned. */
    public boolean cacheable(long address, long length) {
        if (owns(address, length)) {
            return true;
        }
        if (address < 0 || length < 0) {
            return false;
        }
        long first = address / slabSize;
        long last = (address + Math.max(length, 1) - 1) / slabSize;
        for (long s = first; s <= last; s++) {
            if (!slabIndexes.contains(s) && !retired.contains(s)) {
                return false;
            }
        }
        return true;
    }

    public int slabCount() {
        return slabs.size();
    }

    /** Whether {@code [address, address + length)} lies in slabs this frontend owns. */
    public boolean owns(long address, long length) {
        if (address < 0 || length < 0) {
            return false;
        }
        long first = address / slabSize;
        long last = (address + Math.max(length, 1) - 1) / slabSize;
        for (long s = first; s <= last; s++) {
            if (!slabIndexes.contains(s)) {
                return false;
            }
        }
        return true;
    }

    public long largestBlock() {
        for (int c = SlabHeaderLayout.CLASS_COUNT - 1; c >= 0; c--) {
            if (SlabHeaderLayout.blockSize(c) <= slabSize - SlabHeaderLayout.HEADER_LENGTH) {
                return SlabHeaderLayout.payloadSize(c);
            }
        }
        return 0;
    }

    public long allocate(Transaction tx, long size) {
        if (size <= 0 || size > largestBlock()) {
            throw new IllegalArgumentException("allocation size " + size + " outside [1, " + largestBlock()
                    + "] (largest block in a " + slabSize + "-byte slab)");
        }
        int c = SlabHeaderLayout.sizeClassFor(size);
        for (int i = 0; i < slabs.size(); i++) {
            int k = (hint + i) % slabs.size();
            long slab = slabs.get(k);
            long block = tryAllocate(tx, slab, c, size);
            if (block != 0) {
                hint = k;
                return block;
            }
        }
        needSlab.run();
        throw new IllegalStateException("slab request did not abandon the attempt");
    }

    private long tryAllocate(Transaction tx, long slab, int c, long size) {
        long magic = tx.readLong(slab + SlabHeaderLayout.MAGIC_OFFSET);
        if (magic != SlabHeaderLayout.MAGIC) {
            throw new CorruptRecordException(slabName(slab), slab + SlabHeaderLayout.MAGIC_OFFSET,
                    "slab header magic", SlabHeaderLayout.MAGIC, magic);
        }
        long headAt = slab + SlabHeaderLayout.freeHeadOffset(c);
        long head = tx.readLong(headAt);
        if (head != 0) {
            checkFreeBlock(tx, slab, headAt, head, "free-list head of size class " + c);
            long next = tx.readLong(head);
            if (next != 0) {
                checkFreeBlock(tx, slab, head, next, "free-list link of size class " + c);
            }
            tx.writeLong(headAt, next);
            tx.writeLong(head - SlabHeaderLayout.BLOCK_HEADER_LENGTH, SlabHeaderLayout.blockHeader(c));
            tx.write(head, new byte[(int) size]);
            countLive(tx, slab, +1);
            return head;
        }
        long bump = tx.readLong(slab + SlabHeaderLayout.BUMP_OFFSET);
        if (bump < SlabHeaderLayout.HEADER_LENGTH || bump > slabSize) {
            throw new CorruptRecordException(slabName(slab), slab + SlabHeaderLayout.BUMP_OFFSET,
                    "bump offset (expected within [" + SlabHeaderLayout.HEADER_LENGTH + ", " + slabSize + "])",
                    SlabHeaderLayout.HEADER_LENGTH, bump);
        }
        long blockSize = SlabHeaderLayout.blockSize(c);
        if (bump + blockSize > slabSize) {
            return 0;
        }
        if (tx instanceof FreshMemory fresh) {
            fresh.knownZero(slab + bump, slabSize - bump); // above the bump pointer: zero since the grant
        }
        tx.writeLong(slab + SlabHeaderLayout.BUMP_OFFSET, bump + blockSize);
        tx.writeLong(slab + bump, SlabHeaderLayout.blockHeader(c));
        countLive(tx, slab, +1);
        return slab + bump + SlabHeaderLayout.BLOCK_HEADER_LENGTH;
    }

    /** Adjusts the slab's live-block count (a slab granted before the count existed is left uncounted). */
    private long countLive(Transaction tx, long slab, int delta) {
        long at = slab + SlabHeaderLayout.LIVE_OFFSET;
        long live = tx.readLong(at);
        if (live == SlabHeaderLayout.LIVE_UNCOUNTED) {
            return live;
        }
        if (live < SlabHeaderLayout.LIVE_EMPTY || live + delta < SlabHeaderLayout.LIVE_EMPTY
                || live + delta > SlabHeaderLayout.LIVE_EMPTY + slabSize / SlabHeaderLayout.blockSize(0)) {
            throw new CorruptRecordException(slabName(slab), at, "live-block word (allocated blocks + 1, "
                    + (delta < 0 ? "freeing a block" : "allocating a block") + ")", SlabHeaderLayout.LIVE_EMPTY,
                    live);
        }
        tx.writeLong(at, live + delta);
        return live + delta;
    }

    /**
     * A free-list entry read from PM (at {@code from}) must be the payload of a free block of this slab: inside
     * it, past the header, with a cleared block header. Anything else is corruption, reported before the
     * allocator follows it.
     */
    private void checkFreeBlock(Transaction tx, long slab, long from, long block, String what) {
        long lo = slab + SlabHeaderLayout.HEADER_LENGTH + SlabHeaderLayout.BLOCK_HEADER_LENGTH;
        if (block < lo || block >= slab + slabSize) {
            throw new CorruptRecordException(slabName(slab), from, what + " (expected an address in [" + lo + ", "
                    + (slab + slabSize) + "))", lo, block);
        }
        long header = tx.readLong(block - SlabHeaderLayout.BLOCK_HEADER_LENGTH);
        if (header != 0) {
            throw new CorruptRecordException(slabName(slab), block - SlabHeaderLayout.BLOCK_HEADER_LENGTH,
                    "header of the free block " + block + " on the " + what, 0, header);
        }
    }

    private String slabName(long slab) {
        return "allocator metadata of slab " + slab / slabSize + " (heap address " + slab + ")";
    }

    public void free(Transaction tx, long address) {
        if (!owns(address - SlabHeaderLayout.BLOCK_HEADER_LENGTH, SlabHeaderLayout.BLOCK_HEADER_LENGTH + 8)) {
            throw new IllegalArgumentException("free of address " + address + " outside this frontend's slabs");
        }
        long header = tx.readLong(address - SlabHeaderLayout.BLOCK_HEADER_LENGTH);
        int c = SlabHeaderLayout.sizeClassOf(header);
        if (c < 0) {
            throw new IllegalArgumentException("free of address " + address
                    + ": not an allocated block (double free or not from allocate)");
        }
        long slab = (address / slabSize) * slabSize;
        long headAt = slab + SlabHeaderLayout.freeHeadOffset(c);
        tx.writeLong(address, tx.readLong(headAt));
        tx.writeLong(headAt, address);
        tx.writeLong(address - SlabHeaderLayout.BLOCK_HEADER_LENGTH, 0);
        if (countLive(tx, slab, -1) == SlabHeaderLayout.LIVE_EMPTY && slab / slabSize != firstSlab()) {
            emptied.accept(slab / slabSize);
        }
    }

    public long directory(Transaction tx) {
        long first = firstSlabAddress;
        return first < 0 ? 0 : tx.readLong(first + SlabHeaderLayout.DIRECTORY_OFFSET);
    }

    public void setDirectory(Transaction tx, long address) {
        if (slabs.isEmpty()) {
            needSlab.run();
        }
        tx.writeLong(slabs.get(0) + SlabHeaderLayout.DIRECTORY_OFFSET, address);
    }

    public long root(Transaction tx) {
        long first = firstSlabAddress;
        return first < 0 ? 0 : tx.readLong(first + SlabHeaderLayout.ROOT_OFFSET);
    }

    public void setRoot(Transaction tx, long address) {
        if (slabs.isEmpty()) {
            needSlab.run();
        }
        tx.writeLong(slabs.get(0) + SlabHeaderLayout.ROOT_OFFSET, address);
    }
}
