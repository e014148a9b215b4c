package io.asymnvm.core.inspect;

import io.asymnvm.core.layout.SuperblockLayout.Superblock;

import java.util.List;

/**
 * An offline, read-only walk of a PM image's heap: the block allocator of every owned slab and every named
 * structure of every frontend (found through {@link java.util.ServiceLoader}; the structures module provides
 * one). It reads through {@link Reader} only and never writes.
 */
public interface HeapInspector {

    /** Reads {@code length} bytes at {@code fileOffset} of the PM image. */
    interface Reader {
        byte[] read(long fileOffset, int length);
    }

    /**
     * What the walk found. {@code problems}: corruption, each naming structure or slab, heap address, expected
     * and actual; {@code warnings}: conditions that are not corruption (blocks no structure references, which raw
     * {@code Transaction.allocate} users may own); {@code lines}: one summary line per frontend and structure.
     */
    record Findings(List<String> problems, List<String> warnings, List<String> lines, long structures,
                    long entries, long allocatedBlocks, long freeBlocks) {
        public boolean ok() {
            return problems.isEmpty();
        }
    }

    /** Walks the heap of the image described by {@code sb}; {@code slabOwners[i]} is slab i's frontend or < 0. */
    Findings inspect(Superblock sb, int[] slabOwners, Reader reader);
}
