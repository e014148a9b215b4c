package io.asymnvm.structures.layout;

/**
 * A structure's node pool: page-aligned {@link NodePageLayout#NODE_SIZE}-byte nodes carved out of
 * {@link #EXTENT_PAYLOAD}-byte allocator blocks (allocator blocks carry an 8-byte header and are therefore never
 * page-aligned themselves; a node straddling two pages would cost two page-cache entries and two misses). Freed
 * nodes go to a free list threaded through their {@code link0}. The pool's state is {@link #LENGTH} bytes inside
 * the structure's root block, at the offset the structure's layout names.
 *
 * <pre>
 *   0 freeHead(8)   first free node, 0 = none
 *   8 cursor(8)     next never-used node address in the current extent, 0 = no extent yet
 *  16 limit(8)      end of the aligned area of the current extent
 *  24 carved(8)     nodes ever carved from extents (in use + free)
 *
 * extent (one allocator block of EXTENT_PAYLOAD bytes at address P):
 *   P .. A           unused head, A = alignUp(P + 8, NODE_SIZE)
 *   A .. limit       (P + EXTENT_PAYLOAD - A) / NODE_SIZE whole nodes (14 or 15)
 * </pre>
 */
public final class NodePoolLayout {
    public static final int FREE_HEAD_OFFSET = 0;
    public static final int CURSOR_OFFSET = 8;
    public static final int LIMIT_OFFSET = 16;
    public static final int CARVED_OFFSET = 24;
    public static final int LENGTH = 32;
    public static final int EXTENT_PAYLOAD = 64 << 10;
    public static final int EXTENT_HEAD_RESERVE = 8;

    private NodePoolLayout() {
    }

    /** First node address of an extent whose payload starts at {@code extent}. */
    public static long firstNode(long extent) {
        long n = NodePageLayout.NODE_SIZE;
        return (extent + EXTENT_HEAD_RESERVE + n - 1) / n * n;
    }

    /** End of the last whole node of an extent whose payload starts at {@code extent}. */
    public static long limit(long extent) {
        long first = firstNode(extent);
        return first + (extent + EXTENT_PAYLOAD - first) / NodePageLayout.NODE_SIZE * NodePageLayout.NODE_SIZE;
    }
}
