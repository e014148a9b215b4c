package io.asymnvm.structures;

import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.HashMapLayout;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

import static io.asymnvm.structures.PageChecks.corrupt;
import static io.asymnvm.structures.layout.HashMapLayout.FANOUT;
import static io.asymnvm.structures.layout.HashMapLayout.entryOffset;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_BUCKET;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;

/**
 * Full consistency check of a hash map: directory and segments present for every bucket, every bucket chain
 * sound and acyclic, no page in two chains, every key in the bucket its hash selects and unique there, and the
 * size, live-byte, page and pool counts equal to the root fields.
 */
final class HashVerifier {
    private HashVerifier() {
    }

    static void verify(HashCore core, ValueCodec<?> keyCodec, ValueCodec<?> valueCodec) {
        long root = core.root.address;
        Session s = core.session;
        long buckets = core.bucketCount();
        if (buckets > HashMapLayout.MAX_BUCKETS) {
            throw corrupt(root, "hash map has " + buckets + " buckets, more than " + HashMapLayout.MAX_BUCKETS);
        }
        Set<Long> inUse = new HashSet<>();
        long dir = core.directory();
        Block d = s.peek(dir, NODE_SIZE);
        if (d.getByte(HashMapLayout.TABLE_KIND_OFFSET) != HashMapLayout.KIND_DIRECTORY || !inUse.add(dir)) {
            throw corrupt(root, "directory page " + dir + " has kind " + d.getByte(HashMapLayout.TABLE_KIND_OFFSET));
        }
        long segments = (buckets + FANOUT - 1) / FANOUT;
        if (segments != core.segments()) {
            throw corrupt(root, buckets + " buckets need " + segments + " segments, segment count says "
                    + core.segments());
        }
        for (long i = 0; i < segments; i++) {
            long seg = d.getLong((int) entryOffset(i));
            if (seg <= 0 || seg % NODE_SIZE != 0 || !inUse.add(seg)
                    || s.peek(seg, NODE_SIZE).getByte(HashMapLayout.TABLE_KIND_OFFSET) != HashMapLayout.KIND_SEGMENT) {
                throw corrupt(root, "segment " + i + " at " + seg + " is missing, shared or not a segment page");
            }
        }
        long entries = 0;
        long liveBytes = 0;
        long pages = 0;
        for (long b = 0; b < buckets; b++) {
            long at = core.head(b);
            if (at == 0) {
                throw corrupt(root, "bucket " + b + " has no head page");
            }
            Set<ByteBuffer> keys = new HashSet<>();
            while (at != 0) {
                if (at % NODE_SIZE != 0 || !inUse.add(at)) {
                    throw corrupt(root, "bucket " + b + " page " + at + " is misaligned, shared or in a cycle");
                }
                NodePage p = new NodePage(s.peek(at, NODE_SIZE));
                if (p.kind() != KIND_BUCKET) {
                    throw corrupt(root, "bucket " + b + " page " + at + " has kind '" + (char) p.kind() + "'");
                }
                PageChecks.checkPage(s.tx, root, p, false, keyCodec, valueCodec);
                for (int i = 0; i < p.count(); i++) {
                    byte[] key = p.key(i);
                    long home = core.bucketOf(KeyHash.hash64(key));
                    if (home != b) {
                        throw corrupt(root, "key in bucket " + b + " page " + at + " slot " + i + " belongs to bucket "
                                + home);
                    }
                    if (!keys.add(ByteBuffer.wrap(key))) {
                        throw corrupt(root, "key stored twice in bucket " + b);
                    }
                }
                entries += p.count();
                liveBytes += p.liveBytes();
                pages++;
                at = p.link0();
            }
        }
        if (entries != core.size() || liveBytes != core.liveBytes() || pages != core.bucketPages()) {
            throw corrupt(root, "hash map holds " + entries + " entries, " + liveBytes + " live bytes in " + pages
                    + " pages; root fields say " + core.size() + ", " + core.liveBytes() + ", "
                    + core.bucketPages());
        }
        long free = PageChecks.checkFreeList(s, root, core.pool(), inUse);
        if (inUse.size() + free != core.pool().carved()) {
            throw corrupt(root, inUse.size() + " pages in use + " + free + " free != " + core.pool().carved()
                    + " carved");
        }
    }
}
