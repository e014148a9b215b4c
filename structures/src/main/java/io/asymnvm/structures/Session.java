package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The blocks one structure operation works on. Each node or root block is read from the transaction once into a
 * {@link Block}; the operation reads and changes the copies, and {@link #flush()} writes every change at the end.
 * Because nothing is written before the operation has succeeded, an operation that fails (bad input, a codec
 * error) leaves the transaction's view untouched even when the caller catches the exception and carries on.
 *
 * <p>Every block of a structure (root block, node pages, hash directory and segment pages) goes through the
 * session; only blob values (written once, whole) are read and written directly on the transaction. So no stale
 * copy can overwrite a change. Confined to the thread running the transaction; lives for one operation.
 */
final class Session {
    final Transaction tx;
    /**
     * The blocks in the order first loaded (flushed in that order). An operation touches a handful, so they are
     * found by a scan; past {@link #INDEXED_FROM} an index by address is kept beside them (long operations).
     */
    private Block[] blocks = new Block[4];
    private int count;
    private Map<Long, Block> index;
    static final int INDEXED_FROM = 8;
    /** The structure this session works on, for corruption reports (set once its root is known). */
    private String structure = "a persistent structure";

    Session(Transaction tx) {
        this.tx = tx;
    }

    static Session current() {
        return new Session(Transaction.current());
    }

    /** Names the structure in corruption reports. */
    void describe(String structure) {
        this.structure = structure;
    }

    String structure() {
        return structure;
    }

    /**
     * Reads {@code [address, address + length)} where a pointer stored in the structure led: a range the
     * transaction refuses (outside the heap) is the structure's corruption, not the caller's mistake.
     */
    byte[] readStored(long address, int length, String what) {
        try {
            return tx.read(address, length);
        } catch (IllegalArgumentException outside) {
            throw outsideHeap(address, length, what, outside);
        }
    }

    /**
     * As {@link #readStored} for the {@code length} bytes of the blob of leaf record {@code i} of {@code page}; its
     * description for the report is made only when there is one (this runs on every put of a blob value).
     */
    byte[] readBlob(NodePage page, int i, int length) {
        long address = page.blobAddress(i);
        try {
            return tx.read(address, length);
        } catch (IllegalArgumentException outside) {
            throw outsideHeap(address, length, Records.blob(page, i), outside);
        }
    }

    private StructureCorruptException outsideHeap(long address, int length, String what,
                                                  IllegalArgumentException outside) {
        return new StructureCorruptException(structure, address, what + " of " + length + " bytes",
                "a range inside the heap", "[" + address + ", " + (address + length) + ")", outside);
    }

    /** As {@link #readStored}, without a copy where the transaction can share the page ({@link Block#shared}). */
    private byte[] readStoredShared(long address, int length, String what) {
        try {
            return tx.readShared(address, length);
        } catch (IllegalArgumentException outside) {
            throw outsideHeap(address, length, what, outside);
        }
    }

    private Block find(long address) {
        if (index != null) {
            return index.get(address);
        }
        for (int i = 0; i < count; i++) {
            if (blocks[i].address == address) {
                return blocks[i];
            }
        }
        return null;
    }

    /** Keeps {@code b} as the block at its address, in the place of an earlier one there if any. */
    private void keep(Block b) {
        boolean present = index != null ? index.containsKey(b.address) : find(b.address) != null;
        for (int i = 0; present && i < count; i++) {
            if (blocks[i].address == b.address) {
                blocks[i] = b;
                if (index != null) {
                    index.put(b.address, b);
                }
                return;
            }
        }
        if (count == blocks.length) {
            blocks = Arrays.copyOf(blocks, count * 2);
        }
        blocks[count++] = b;
        if (index != null) {
            index.put(b.address, b);
        } else if (count > INDEXED_FROM) {
            index = new HashMap<>();
            for (int i = 0; i < count; i++) {
                index.put(blocks[i].address, blocks[i]);
            }
        }
    }

    /** The working copy of {@code [address, address + length)}, read on first use. */
    Block load(long address, int length) {
        Block b = find(address);
        if (b == null) {
            b = Block.shared(address, readStoredShared(address, length, "block"));
            b.owner = structure;
            keep(b);
        } else if (b.length() != length) {
            throw new IllegalStateException("block " + address + " loaded as " + b.length() + " and "
                    + length + " bytes");
        }
        return b;
    }

    /**
     * The working copy of {@code [address, address + length)}, which lies at {@code base} of {@code page}, a page
     * the caller has just read shared from the transaction ({@link Transaction#readShared}), unless one is already
     * kept (then that one, as {@link #load} would return it). Not copied until it changes.
     */
    Block adoptSlice(long address, byte[] page, int base, int length) {
        Block b = find(address);
        if (b == null) {
            b = Block.sharedSlice(address, page, base, length);
            b.owner = structure;
            keep(b);
        } else if (b.length() != length) {
            throw new IllegalStateException("block " + address + " loaded as " + b.length() + " and "
                    + length + " bytes");
        }
        return b;
    }

    /** A working copy of a block this operation will initialize entirely: not read. */
    Block fresh(long address, int length) {
        Block b = new Block(address, new byte[length]);
        keep(b);
        return b;
    }

    /**
     * The working copy of a block the caller has just read itself ({@code bytes}, a private copy), unless one is
     * already kept (then that one, as {@link #load} would return it).
     */
    Block adopt(long address, byte[] bytes) {
        Block b = find(address);
        if (b == null) {
            b = new Block(address, bytes);
            b.owner = structure;
            keep(b);
        } else if (b.length() != bytes.length) {
            throw new IllegalStateException("block " + address + " loaded as " + b.length() + " and "
                    + bytes.length + " bytes");
        }
        return b;
    }

    /** A read-only copy not kept by the session (long scans must not retain every page they pass). */
    Block peek(long address, int length) {
        Block b = find(address);
        if (b != null) {
            return b;
        }
        Block peeked = Block.shared(address, readStoredShared(address, length, "block"));
        peeked.owner = structure;
        return peeked;
    }

    /** Writes every change made through this session. */
    void flush() {
        for (int i = 0; i < count; i++) {
            Block b = blocks[i];
            if (b.isDirty()) {
                b.flush(tx);
            }
        }
    }
}
