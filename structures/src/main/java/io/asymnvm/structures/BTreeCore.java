package io.asymnvm.structures;

import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.BTreeLayout;
import io.asymnvm.structures.layout.NodePageLayout;
import io.asymnvm.structures.layout.StructureHeaderLayout;

import java.util.List;

import static io.asymnvm.structures.layout.NodePageLayout.CAPACITY;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_INNER;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_LEAF;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;
import static io.asymnvm.structures.layout.NodePageLayout.SLOT_LENGTH;

/**
 * The B+tree algorithms on encoded keys and values, for one operation ({@link Session}).
 *
 * <p><b>Insert</b> descends recording the path; a full node is split by bytes (both halves take about half of
 * the records' bytes, which with records of at most a third of a node always yields two valid nodes), the
 * separator (the right leaf's first key, or for inner nodes the middle separator pushed up) goes into the parent,
 * and a split root grows the tree by one level. <b>Remove</b> rebalances a non-root node whose live bytes fall
 * below {@link BTreeLayout#MIN_LIVE_BYTES}: merged with a sibling when both fit in one node (the parent loses a
 * separator and may underflow in turn), otherwise the records of both are redistributed and the separator in
 * the parent replaced (which may split the parent, variable-length keys being what they are). An inner root
 * left with a single child is removed. All of this stays within the operation's transaction and touches
 * O(height) nodes, so its redo is bounded.
 */
final class BTreeCore implements MapCore {
    /** Leaves built by {@link #appendSorted} are filled up to this many live bytes. */
    static final int BULK_FILL_BYTES = CAPACITY * 9 / 10;

    /** Receives encoded entries. */
    interface RawVisitor {
        boolean visit(byte[] key, byte[] value);
    }

    final Session session;
    final Block root;
    private final NodePool pool;
    /**
     * The last descent's nodes and child indices, by depth; sized to the tree's height at the descent (a get of a
     * height-3 tree allocates 2 x 3 slots, not 2 x {@value BTreeLayout#MAX_HEIGHT}).
     */
    private Block[] path = NO_PATH;
    private int[] pathIndex = NO_PATH_INDEX;
    private static final Block[] NO_PATH = new Block[0];
    private static final int[] NO_PATH_INDEX = new int[0];

    BTreeCore(Session session, Block root) {
        this.session = session;
        this.root = root;
        this.pool = new NodePool(session, root, BTreeLayout.POOL_OFFSET);
    }

    /** Writes the root fields and the first (empty leaf) node of a new tree whose header is already written. */
    static void initialize(Session session, long rootAddress) {
        BTreeCore c = new BTreeCore(session, session.load(rootAddress, StructureHeaderLayout.ROOT_BLOCK_LENGTH));
        Block leaf = c.pool.allocate();
        NodePage.init(leaf, KIND_LEAF, 0);
        c.root.putLong(BTreeLayout.ROOT_NODE_OFFSET, leaf.address);
        c.root.putLong(BTreeLayout.HEIGHT_OFFSET, 1);
        c.root.putLong(BTreeLayout.NODE_COUNT_OFFSET, 1);
        c.root.putLong(BTreeLayout.SIZE_OFFSET, 0);
        session.flush();
    }

    @Override
    public void flush() {
        session.flush();
    }

    @Override
    public long size() {
        return root.getLong(BTreeLayout.SIZE_OFFSET);
    }

    long rootNode() {
        return root.getLong(BTreeLayout.ROOT_NODE_OFFSET);
    }

    int height() {
        long h = root.getLong(BTreeLayout.HEIGHT_OFFSET);
        if (h < 1 || h > BTreeLayout.MAX_HEIGHT) {
            throw new StructureCorruptException("B+tree at " + root.address + " has height " + h);
        }
        return (int) h;
    }

    long nodeCount() {
        return root.getLong(BTreeLayout.NODE_COUNT_OFFSET);
    }

    NodePool pool() {
        return pool;
    }

    private void addSize(long delta) {
        root.putLong(BTreeLayout.SIZE_OFFSET, size() + delta);
    }

    private void addNodes(long delta) {
        root.putLong(BTreeLayout.NODE_COUNT_OFFSET, nodeCount() + delta);
    }

    private NodePage load(long address) {
        return new NodePage(session.load(address, NODE_SIZE));
    }

    private NodePage page(int depth) {
        return new NodePage(path[depth]);
    }

    private static boolean valid(NodePage p, int depth, int height) {
        return p.kind() == (depth == height - 1 ? KIND_LEAF : KIND_INNER) && p.level() == height - 1 - depth;
    }

    private NodePage checked(NodePage p, int depth, int height) {
        byte want = depth == height - 1 ? KIND_LEAF : KIND_INNER;
        if (!valid(p, depth, height)) {
            throw new StructureCorruptException("B+tree at " + root.address + ": node " + p.address() + " at depth "
                    + depth + " has kind '" + (char) p.kind() + "' level " + p.level() + ", expected '" + (char) want
                    + "' level " + (height - 1 - depth));
        }
        return p;
    }

    /** Child index of {@code key} in inner node {@code p}: the number of separators at most {@code key}. */
    private static int childIndex(NodePage p, byte[] key) {
        int i = p.search(key);
        return i >= 0 ? i + 1 : -i - 1;
    }

    /** Makes the path arrays hold at least {@code height} levels. */
    private void pathFor(int height) {
        if (path.length < height) {
            path = new Block[height];
            pathIndex = new int[height];
        }
    }

    /** Descends to the leaf of {@code key}, recording the path; returns the leaf. */
    NodePage descend(byte[] key) {
        int h = height();
        pathFor(h);
        long at = rootNode();
        for (int d = 0; d < h; d++) {
            NodePage p = load(at);
            if (session.tx.doomed() && !valid(p, d, h)) {
                // a node not fetched yet reads as zeros: an empty leaf, so the attempt goes on to its other keys
                for (int r = d; r < h; r++) {
                    path[r] = p.block;
                }
                return p;
            }
            checked(p, d, h);
            path[d] = p.block;
            if (d < h - 1) {
                session.tx.preferCached(at); // inner nodes outlive leaves in the frontend's page cache
                int j = childIndex(p, key);
                pathIndex[d] = j;
                at = p.childAt(j);
            }
        }
        return page(h - 1);
    }

    /** Descends along the first ({@code rightmost == false}) or last child at every level. */
    NodePage descendEdge(boolean rightmost) {
        int h = height();
        pathFor(h);
        long at = rootNode();
        for (int d = 0; d < h; d++) {
            NodePage p = checked(load(at), d, h);
            path[d] = p.block;
            if (d < h - 1) {
                session.tx.preferCached(at); // inner nodes outlive leaves in the frontend's page cache
                int j = rightmost ? p.count() : 0;
                pathIndex[d] = j;
                at = p.childAt(j);
            }
        }
        return page(h - 1);
    }

    @Override
    public byte[] get(byte[] key) {
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        return i >= 0 ? Records.value(session, leaf, i) : null;
    }

    @Override
    public <T> T get(byte[] key, ValueCodec<T> codec) {
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        return i >= 0 ? Records.decodeValue(session, leaf, i, codec) : null;
    }

    /** Inserts or replaces; returns the previous value. With {@code onlyIfAbsent}, never replaces. */
    @Override
    public byte[] put(byte[] key, byte[] value, boolean onlyIfAbsent) {
        int h = height();
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        if (i >= 0) {
            byte[] old = Records.value(session, leaf, i);
            if (onlyIfAbsent) {
                return old;
            }
            if (Records.overwriteInPlace(session.tx, leaf, i, value) >= 0) {
                return old; // same key, so no separator changes; a shrunk record only leaves garbage in the leaf
            }
            Records.freeBlob(session.tx, leaf, i);
            leaf.remove(i);
            insertAt(h - 1, i, Records.leaf(session.tx, key, value));
            return old;
        }
        insertAt(h - 1, -i - 1, Records.leaf(session.tx, key, value));
        addSize(1);
        return null;
    }

    @Override
    public byte[] remove(byte[] key) {
        int h = height();
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        if (i < 0) {
            return null;
        }
        byte[] old = Records.value(session, leaf, i);
        Records.freeBlob(session.tx, leaf, i);
        leaf.remove(i);
        addSize(-1);
        rebalance(h - 1);
        return old;
    }

    /** Inserts {@code record} at slot {@code pos} of the node at {@code depth}, splitting upwards as needed. */
    private void insertAt(int depth, int pos, byte[] record) {
        NodePage node = page(depth);
        if (node.insert(pos, record)) {
            return;
        }
        List<byte[]> recs = node.records();
        recs.add(pos, record);
        int n = recs.size();
        NodePage right = NodePage.init(pool.allocate(), node.kind(), node.level());
        addNodes(1);
        byte[] separator;
        if (node.kind() == KIND_LEAF) {
            int k = splitPoint(recs, 1, n - 1);
            node.rebuild(recs, 0, k);
            right.rebuild(recs, k, n);
            long next = node.link0();
            right.setLink0(next);
            right.setLink1(node.address());
            node.setLink0(right.address());
            if (next != 0) {
                load(next).setLink1(right.address());
            }
            separator = Records.key(recs.get(k));
        } else {
            int k = splitPoint(recs, 1, n - 2);
            node.rebuild(recs, 0, k);
            right.setLink0(Records.child(recs.get(k)));
            right.rebuild(recs, k + 1, n);
            separator = Records.key(recs.get(k));
        }
        promote(depth, separator, right.address());
    }

    /** Adds separator {@code key} with right child {@code right} above the node at {@code depth}. */
    private void promote(int depth, byte[] key, long right) {
        if (depth > 0) {
            insertAt(depth - 1, pathIndex[depth - 1], Records.inner(key, right));
            return;
        }
        NodePage old = page(0);
        int h = height();
        if (h == BTreeLayout.MAX_HEIGHT) {
            throw new IllegalStateException("B+tree at " + root.address + " reached the maximum height " + h);
        }
        NodePage top = NodePage.init(pool.allocate(), KIND_INNER, old.level() + 1);
        addNodes(1);
        top.setLink0(old.address());
        top.append(Records.inner(key, right));
        root.putLong(BTreeLayout.ROOT_NODE_OFFSET, top.address());
        root.putLong(BTreeLayout.HEIGHT_OFFSET, h + 1);
    }

    /**
     * The split index {@code k} in {@code [min, max]} that best balances the bytes of {@code recs[0, k)} and
     * {@code recs[k, n)}.
     */
    static int splitPoint(List<byte[]> recs, int min, int max) {
        int total = 0;
        for (byte[] r : recs) {
            total += r.length + SLOT_LENGTH;
        }
        int acc = 0;
        int best = min;
        int bestDiff = Integer.MAX_VALUE;
        for (int k = 1; k < recs.size(); k++) {
            acc += recs.get(k - 1).length + SLOT_LENGTH;
            int diff = Math.abs(2 * acc - total);
            if (k >= min && k <= max && diff < bestDiff) {
                best = k;
                bestDiff = diff;
            }
            if (2 * acc >= total && k >= min) {
                break;
            }
        }
        return best;
    }

    private void freeNode(NodePage p) {
        pool.free(p.block);
        addNodes(-1);
    }

    /** Restores the fill of the node at {@code depth} (and its ancestors) after a removal. */
    private void rebalance(int depth) {
        int d = depth;
        while (d > 0) {
            NodePage node = page(d);
            if (node.liveBytes() >= BTreeLayout.MIN_LIVE_BYTES) {
                return;
            }
            NodePage parent = page(d - 1);
            if (parent.count() == 0) {
                return;
            }
            int j = pathIndex[d - 1];
            int sep = j > 0 ? j - 1 : 0;
            NodePage left = j > 0 ? load(parent.childAt(j - 1)) : node;
            NodePage right = j > 0 ? node : load(parent.childAt(1));
            if (node.kind() == KIND_LEAF) {
                if (left.liveBytes() + right.liveBytes() <= CAPACITY) {
                    for (byte[] r : right.records()) {
                        left.append(r);
                    }
                    long next = right.link0();
                    left.setLink0(next);
                    if (next != 0) {
                        load(next).setLink1(left.address());
                    }
                    freeNode(right);
                    parent.remove(sep);
                } else {
                    List<byte[]> recs = left.records();
                    recs.addAll(right.records());
                    int k = splitPoint(recs, 1, recs.size() - 1);
                    left.rebuild(recs, 0, k);
                    right.rebuild(recs, k, recs.size());
                    replaceSeparator(d - 1, sep, Records.key(recs.get(k)));
                    return;
                }
            } else {
                byte[] down = Records.inner(parent.key(sep), right.link0());
                if (left.liveBytes() + right.liveBytes() + down.length + SLOT_LENGTH <= CAPACITY) {
                    left.append(down);
                    for (byte[] r : right.records()) {
                        left.append(r);
                    }
                    freeNode(right);
                    parent.remove(sep);
                } else {
                    List<byte[]> recs = left.records();
                    recs.add(down);
                    recs.addAll(right.records());
                    int k = splitPoint(recs, 1, recs.size() - 2);
                    left.rebuild(recs, 0, k);
                    right.setLink0(Records.child(recs.get(k)));
                    right.rebuild(recs, k + 1, recs.size());
                    replaceSeparator(d - 1, sep, Records.key(recs.get(k)));
                    return;
                }
            }
            d--;
        }
        NodePage top = page(0);
        if (top.kind() == KIND_INNER && top.count() == 0) {
            long child = top.link0();
            freeNode(top);
            root.putLong(BTreeLayout.ROOT_NODE_OFFSET, child);
            root.putLong(BTreeLayout.HEIGHT_OFFSET, height() - 1);
        }
    }

    private void replaceSeparator(int depth, int index, byte[] key) {
        NodePage p = page(depth);
        long child = p.child(index);
        p.remove(index);
        insertAt(depth, index, Records.inner(key, child));
    }

    /**
     * Appends entries whose keys are ascending and above every stored key, filling leaves to
     * {@link #BULK_FILL_BYTES}. The caller has checked the order.
     */
    void appendSorted(List<byte[]> keys, List<byte[]> values) {
        descendEdge(true);
        for (int e = 0; e < keys.size(); e++) {
            int h = height();
            NodePage leaf = page(h - 1);
            byte[] rec = Records.leaf(session.tx, keys.get(e), values.get(e));
            if (leaf.count() == 0 || leaf.liveBytes() + rec.length + SLOT_LENGTH <= BULK_FILL_BYTES) {
                leaf.append(rec);
            } else {
                NodePage fresh = NodePage.init(pool.allocate(), KIND_LEAF, 0);
                addNodes(1);
                fresh.setLink1(leaf.address());
                leaf.setLink0(fresh.address());
                fresh.append(rec);
                promote(h - 1, keys.get(e), fresh.address());
                descendEdge(true);
            }
            addSize(1);
        }
    }

    /** The largest key, or null. */
    byte[] lastKey() {
        Cursor c = backward(descendEdge(true), Integer.MAX_VALUE);
        return c.valid() ? c.page.key(c.index) : null;
    }

    byte[] firstKey() {
        Cursor c = forward(descendEdge(false), 0);
        return c.valid() ? c.page.key(c.index) : null;
    }

    /** Position of the first key at or above (strictly above without {@code inclusive}) {@code key}. */
    Cursor seekForward(byte[] key, boolean inclusive) {
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        return forward(leaf, i >= 0 ? (inclusive ? i : i + 1) : -i - 1);
    }

    /** Position of the last key at or below (strictly below without {@code inclusive}) {@code key}. */
    Cursor seekBackward(byte[] key, boolean inclusive) {
        NodePage leaf = descend(key);
        int i = leaf.search(key);
        return backward(leaf, i >= 0 ? (inclusive ? i : i - 1) : -i - 2);
    }

    /**
     * Visits the entries between the bounds (null = unbounded) ascending or descending until the visitor
     * returns false.
     */
    void range(byte[] from, boolean fromInclusive, byte[] to, boolean toInclusive, boolean descending,
               RawVisitor visitor) {
        Cursor c;
        if (!descending) {
            c = from == null ? forward(descendEdge(false), 0) : seekForward(from, fromInclusive);
        } else {
            c = to == null ? backward(descendEdge(true), Integer.MAX_VALUE) : seekBackward(to, toInclusive);
        }
        byte[] stop = descending ? from : to;
        boolean stopInclusive = descending ? fromInclusive : toInclusive;
        while (c.valid()) {
            if (stop != null) {
                int cmp = c.page.compareKey(c.index, stop);
                if (descending ? (cmp < 0 || cmp == 0 && !stopInclusive) : (cmp > 0 || cmp == 0 && !stopInclusive)) {
                    return;
                }
            }
            if (!visitor.visit(c.page.key(c.index), Records.value(session, c.page, c.index))) {
                return;
            }
            if (descending) {
                c.previous();
            } else {
                c.next();
            }
        }
    }

    /** A position in the leaf chain that skips empty leaves. */
    final class Cursor {
        NodePage page;
        int index;

        private Cursor(NodePage page, int index) {
            this.page = page;
            this.index = index;
        }

        boolean valid() {
            return page != null;
        }

        void next() {
            index++;
            normalizeForward();
        }

        void previous() {
            index--;
            normalizeBackward();
        }

        void normalizeForward() {
            while (page != null && index >= page.count()) {
                long next = page.link0();
                page = next == 0 ? null : new NodePage(session.peek(next, NODE_SIZE));
                index = 0;
            }
        }

        void normalizeBackward() {
            while (page != null && index < 0) {
                long prev = page.link1();
                page = prev == 0 ? null : new NodePage(session.peek(prev, NODE_SIZE));
                index = page == null ? -1 : page.count() - 1;
            }
        }
    }

    /** A cursor at slot {@code index} of {@code leaf}, moved forward past the end of empty leaves. */
    Cursor forward(NodePage leaf, int index) {
        Cursor c = new Cursor(leaf, index);
        c.normalizeForward();
        return c;
    }

    /** A cursor at slot {@code index} (clamped to the last slot) of {@code leaf}, moved backward as needed. */
    Cursor backward(NodePage leaf, int index) {
        Cursor c = new Cursor(leaf, Math.min(index, leaf.count() - 1));
        c.normalizeBackward();
        return c;
    }
}
