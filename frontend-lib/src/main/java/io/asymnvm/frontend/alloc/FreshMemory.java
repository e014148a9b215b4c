package io.asymnvm.frontend.alloc;

/**
 * A transaction told by the allocator which heap ranges read as zero at the backend (issue 8 goal 4): the part of
 * a slab above its bump pointer. A grant zeroes what the slab's previous owner used (the backend's
 * {@code SlabTable}), and nothing is ever written above the bump pointer, so a page made only of such bytes and of
 * bytes the transaction overwrites needs no fetch: a write into a freshly allocated block never reads it first.
 */
public interface FreshMemory {
    /** {@code [address, address + length)} reads as zero at the backend and in every cached image. */
    void knownZero(long address, long length);
}
