package io.asymnvm.structures;

import io.asymnvm.frontend.Transaction;
import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.NodePageLayout;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static io.asymnvm.structures.layout.NodePageLayout.CHILD_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_INLINE_VALUE;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_KEY_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.MAX_VALUE_LENGTH;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;
import static io.asymnvm.structures.layout.NodePageLayout.TAG_BLOB;

/** Checks shared by the structure verifiers: the physical soundness of a node page, and the free list. */
final class PageChecks {
    private PageChecks() {
    }

    static StructureCorruptException corrupt(long root, String what) {
        return new StructureCorruptException("structure at " + root + ": " + what);
    }

    /**
     * Checks slots, record bounds, tags, key lengths, the heap/garbage accounting, no overlapping records, and
     * strictly ascending keys. With codecs given, decodes every key and (for leaf records) value.
     */
    static void checkPage(Transaction tx, long root, NodePage p, boolean inner, ValueCodec<?> keyCodec,
                          ValueCodec<?> valueCodec) {
        String at = "page " + p.address();
        int n = p.count();
        int heapStart = p.heapStart();
        if (heapStart < NodePageLayout.slotOffset(n) || heapStart > NODE_SIZE) {
            throw corrupt(root, at + " has heapStart " + heapStart + " with " + n + " slots");
        }
        int[] starts = new int[n];
        int[] ends = new int[n];
        long recordBytes = 0;
        for (int i = 0; i < n; i++) {
            int o = p.recordOffset(i);
            if (o < heapStart || o + NodePageLayout.RECORD_HEADER_LENGTH > NODE_SIZE) {
                throw corrupt(root, at + " slot " + i + " points to " + o + " outside [" + heapStart + ", "
                        + NODE_SIZE + ")");
            }
            int keyLength = p.keyLength(i);
            int tag = p.tag(i);
            if (keyLength > MAX_KEY_LENGTH) {
                throw corrupt(root, at + " record " + i + " has a key of " + keyLength + " bytes");
            }
            if (inner ? tag != CHILD_LENGTH : tag != TAG_BLOB && tag > MAX_INLINE_VALUE) {
                throw corrupt(root, at + " record " + i + " has tag 0x" + Integer.toHexString(tag));
            }
            int length = p.recordLength(i);
            if (o + length > NODE_SIZE) {
                throw corrupt(root, at + " record " + i + " runs past the page end");
            }
            starts[i] = o;
            ends[i] = o + length;
            recordBytes += length;
            if (i > 0 && p.compareKey(i - 1, p.key(i)) >= 0) {
                throw corrupt(root, at + " keys " + (i - 1) + " and " + i + " are not strictly ascending");
            }
            if (!inner && tag == TAG_BLOB) {
                int blobLength = p.blobLength(i);
                if (blobLength <= MAX_INLINE_VALUE || blobLength > MAX_VALUE_LENGTH || p.blobAddress(i) <= 0) {
                    throw corrupt(root, at + " record " + i + " has blob " + p.blobAddress(i) + " of "
                            + blobLength + " bytes");
                }
            }
            if (keyCodec != null) {
                int ko = p.keyOffset(i);
                keyCodec.decode(p.block.bytes, ko, keyLength);
                if (!inner) {
                    byte[] v = Records.value(tx, p, i);
                    valueCodec.decode(v, 0, v.length);
                }
            }
        }
        if (recordBytes != NODE_SIZE - heapStart - p.garbage()) {
            throw corrupt(root, at + " has " + recordBytes + " record bytes, header says " + (NODE_SIZE
                    - heapStart) + " minus " + p.garbage() + " garbage");
        }
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Integer[] boxed = Arrays.stream(order).boxed().toArray(Integer[]::new);
        Arrays.sort(boxed, (a, b) -> Integer.compare(starts[a], starts[b]));
        for (int i = 1; i < n; i++) {
            if (starts[boxed[i]] < ends[boxed[i - 1]]) {
                throw corrupt(root, at + " records " + boxed[i - 1] + " and " + boxed[i] + " overlap");
            }
        }
    }

    /**
     * Walks the pool's free list; every node must be marked free and not be in {@code inUse}. Returns the number
     * of free nodes.
     */
    static long checkFreeList(Session session, long root, NodePool pool, Set<Long> inUse) {
        Set<Long> seen = new HashSet<>();
        long at = pool.freeHead();
        while (at != 0) {
            if (!seen.add(at)) {
                throw corrupt(root, "cycle in the node free list at " + at);
            }
            if (seen.size() > pool.carved()) {
                throw corrupt(root, "free list longer than the " + pool.carved() + " carved nodes");
            }
            if (inUse.contains(at)) {
                throw corrupt(root, "node " + at + " is both in use and on the free list");
            }
            if (at % NODE_SIZE != 0) {
                throw corrupt(root, "free node " + at + " is not page-aligned");
            }
            NodePage p = new NodePage(session.peek(at, NODE_SIZE));
            if (p.kind() != NodePageLayout.KIND_FREE) {
                throw corrupt(root, "node " + at + " on the free list has kind '" + (char) p.kind() + "'");
            }
            at = p.link0();
        }
        return seen.size();
    }
}
