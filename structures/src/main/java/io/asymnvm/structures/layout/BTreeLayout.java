package io.asymnvm.structures.layout;

/**
 * Root fields of a persistent B+tree, after the common header of {@link StructureHeaderLayout}. Nodes are node
 * pages ({@link NodePageLayout}): leaves ({@code kind 'L'}, level 0) hold key/value records and are chained both
 * ways through {@code link0} (next) and {@code link1} (previous); inner nodes ({@code kind 'I'}, level above
 * the leaves) hold separator records whose 8-byte payload is the child to the right of the separator, the
 * leftmost child being {@code link0}. Every key {@code k} under child {@code j} satisfies
 * {@code sep[j-1] <= k < sep[j]}.
 *
 * <pre>
 * 128 size(8)        number of entries
 * 136 rootNode(8)    address of the root node (a leaf while the tree has one node)
 * 144 height(8)      levels, 1 = the root is a leaf
 * 152 nodeCount(8)   nodes reachable from the root
 * 160 reserved(32)
 * 192 node pool(32)  see NodePoolLayout
 * 224 reserved(32)
 * </pre>
 */
public final class BTreeLayout {
    public static final int TYPE_ID = 1;
    public static final int SIZE_OFFSET = 128;
    public static final int ROOT_NODE_OFFSET = 136;
    public static final int HEIGHT_OFFSET = 144;
    public static final int NODE_COUNT_OFFSET = 152;
    public static final int POOL_OFFSET = 192;
    /** Deepest tree the code walks (far beyond what 2^63 entries need with 3+ records per node). */
    public static final int MAX_HEIGHT = 48;
    /** A non-root node whose slots and records take less than this is rebalanced with a sibling. */
    public static final int MIN_LIVE_BYTES = NodePageLayout.CAPACITY / 4;

    private BTreeLayout() {
    }
}
