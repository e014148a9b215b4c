package io.asymnvm.structures;

import io.asymnvm.structures.codec.ValueCodec;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.asymnvm.structures.PageChecks.corrupt;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_INNER;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_LEAF;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;

/**
 * Full consistency check of a B+tree: every node sound ({@link PageChecks}), kinds and levels match the height,
 * every key within its parent's separator bounds, every non-root node non-empty, each node reached once (no
 * cycles, no sharing), the leaf chain equal to the in-order leaves both ways, entry and node counts equal to the
 * root fields, and the node pool's accounting closed (in use + free = carved).
 */
final class BTreeVerifier {
    private final BTreeCore core;
    private final ValueCodec<?> keyCodec;
    private final ValueCodec<?> valueCodec;
    private final long root;
    private final int height;
    private final Set<Long> seen = new HashSet<>();
    /** In-order leaves as {address, next, previous}. */
    private final List<long[]> leaves = new ArrayList<>();
    private long entries;

    private BTreeVerifier(BTreeCore core, ValueCodec<?> keyCodec, ValueCodec<?> valueCodec) {
        this.core = core;
        this.keyCodec = keyCodec;
        this.valueCodec = valueCodec;
        this.root = core.root.address;
        this.height = core.height();
    }

    static void verify(BTreeCore core, ValueCodec<?> keyCodec, ValueCodec<?> valueCodec) {
        new BTreeVerifier(core, keyCodec, valueCodec).run();
    }

    private void run() {
        walk(core.rootNode(), 0, null, null);
        for (int i = 0; i < leaves.size(); i++) {
            long[] leaf = leaves.get(i);
            long next = i + 1 < leaves.size() ? leaves.get(i + 1)[0] : 0;
            long prev = i > 0 ? leaves.get(i - 1)[0] : 0;
            if (leaf[1] != next || leaf[2] != prev) {
                throw corrupt(root, "leaf " + leaf[0] + " links next " + leaf[1] + " prev " + leaf[2]
                        + ", in-order neighbours are " + next + " and " + prev);
            }
        }
        if (entries != core.size()) {
            throw corrupt(root, "B+tree holds " + entries + " entries, size field says " + core.size());
        }
        if (seen.size() != core.nodeCount()) {
            throw corrupt(root, "B+tree reaches " + seen.size() + " nodes, node count says " + core.nodeCount());
        }
        long free = PageChecks.checkFreeList(core.session, root, core.pool(), seen);
        if (seen.size() + free != core.pool().carved()) {
            throw corrupt(root, seen.size() + " nodes in use + " + free + " free != " + core.pool().carved()
                    + " carved");
        }
    }

    private void walk(long address, int depth, byte[] low, byte[] high) {
        if (address <= 0 || address % NODE_SIZE != 0) {
            throw corrupt(root, "node address " + address + " at depth " + depth + " is not a page-aligned node");
        }
        if (!seen.add(address)) {
            throw corrupt(root, "node " + address + " reached twice (cycle or shared node)");
        }
        NodePage p = new NodePage(core.session.peek(address, NODE_SIZE));
        boolean leaf = depth == height - 1;
        if (p.kind() != (leaf ? KIND_LEAF : KIND_INNER) || p.level() != height - 1 - depth) {
            throw corrupt(root, "node " + address + " at depth " + depth + " of " + height + " has kind '"
                    + (char) p.kind() + "' level " + p.level());
        }
        PageChecks.checkPage(core.session.tx, root, p, !leaf, leaf ? keyCodec : null, valueCodec);
        int n = p.count();
        if (depth > 0 && n == 0) {
            throw corrupt(root, "non-root node " + address + " is empty");
        }
        if (n > 0) {
            if (low != null && p.compareKey(0, low) < 0) {
                throw corrupt(root, "node " + address + " has a key below its lower separator");
            }
            if (high != null && p.compareKey(n - 1, high) >= 0) {
                throw corrupt(root, "node " + address + " has a key at or above its upper separator");
            }
        }
        if (leaf) {
            entries += n;
            leaves.add(new long[] {address, p.link0(), p.link1()});
            return;
        }
        for (int j = 0; j <= n; j++) {
            walk(p.childAt(j), depth + 1, j == 0 ? low : p.key(j - 1), j == n ? high : p.key(j));
        }
    }
}
