package io.asymnvm.structures;

import io.asymnvm.frontend.alloc.FreshMemory;
import io.asymnvm.structures.layout.NodePageLayout;
import io.asymnvm.structures.layout.NodePoolLayout;

import static io.asymnvm.structures.layout.NodePoolLayout.CARVED_OFFSET;
import static io.asymnvm.structures.layout.NodePoolLayout.CURSOR_OFFSET;
import static io.asymnvm.structures.layout.NodePoolLayout.FREE_HEAD_OFFSET;
import static io.asymnvm.structures.layout.NodePoolLayout.LIMIT_OFFSET;

/**
 * Page-aligned nodes for one structure ({@link NodePoolLayout}): pops the free list, else carves the next node
 * of the current extent, else allocates a new extent. State lives in the root block working copy, so it changes
 * atomically with the operation.
 */
final class NodePool {
    private final Session session;
    private final Block root;
    private final int base;

    NodePool(Session session, Block root, int poolOffset) {
        this.session = session;
        this.root = root;
        this.base = poolOffset;
    }

    /** A node block for the caller to initialize completely. */
    Block allocate() {
        long free = root.getLong(base + FREE_HEAD_OFFSET);
        if (free != 0) {
            Block b = session.load(free, NodePageLayout.NODE_SIZE);
            if (b.getByte(NodePageLayout.KIND_OFFSET) != NodePageLayout.KIND_FREE) {
                throw new StructureCorruptException("node " + free + " on the free list of the structure at "
                        + (root.address) + " is not marked free (kind " + b.getByte(NodePageLayout.KIND_OFFSET)
                        + ")");
            }
            root.putLong(base + FREE_HEAD_OFFSET, b.getLong(NodePageLayout.LINK0_OFFSET));
            return b;
        }
        long cursor = root.getLong(base + CURSOR_OFFSET);
        long limit = root.getLong(base + LIMIT_OFFSET);
        if (cursor == 0 || cursor + NodePageLayout.NODE_SIZE > limit) {
            long extent = session.tx.allocate(NodePoolLayout.EXTENT_PAYLOAD);
            cursor = NodePoolLayout.firstNode(extent);
            root.putLong(base + LIMIT_OFFSET, NodePoolLayout.limit(extent));
        }
        root.putLong(base + CURSOR_OFFSET, cursor + NodePageLayout.NODE_SIZE);
        root.putLong(base + CARVED_OFFSET, root.getLong(base + CARVED_OFFSET) + 1);
        if (session.tx instanceof FreshMemory fresh) {
            // never written since its extent was allocated (zeroed, or above the slab's bump pointer): the
            // node's page need not be fetched before the session writes its ranges
            fresh.knownZero(cursor, NodePageLayout.NODE_SIZE);
        }
        return session.fresh(cursor, NodePageLayout.NODE_SIZE);
    }

    /** Puts a node (already loaded in the session) on the free list. */
    void free(Block node) {
        node.putByte(NodePageLayout.KIND_OFFSET, NodePageLayout.KIND_FREE);
        node.putLong(NodePageLayout.LINK0_OFFSET, root.getLong(base + FREE_HEAD_OFFSET));
        root.putLong(base + FREE_HEAD_OFFSET, node.address);
    }

    long carved() {
        return root.getLong(base + CARVED_OFFSET);
    }

    long freeHead() {
        return root.getLong(base + FREE_HEAD_OFFSET);
    }
}
