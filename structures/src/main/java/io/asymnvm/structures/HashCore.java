package io.asymnvm.structures;

import io.asymnvm.structures.codec.ValueCodec;
import io.asymnvm.structures.layout.HashMapLayout;
import io.asymnvm.structures.layout.StructureHeaderLayout;

import java.util.ArrayList;
import java.util.List;

import static io.asymnvm.structures.layout.HashMapLayout.FANOUT;
import static io.asymnvm.structures.layout.HashMapLayout.entryOffset;
import static io.asymnvm.structures.layout.NodePageLayout.KIND_BUCKET;
import static io.asymnvm.structures.layout.NodePageLayout.NODE_SIZE;
import static io.asymnvm.structures.layout.NodePageLayout.SLOT_LENGTH;

/**
 * The hash map algorithms on encoded keys and values, for one operation ({@link Session}).
 *
 * <p><b>Growth: linear hashing</b> (Litwin 1980). Buckets {@code 0 .. 2^L + split - 1} exist. When the live bytes
 * of all bucket pages exceed {@link HashMapLayout#SPLIT_THRESHOLD_BYTES} per bucket, the insert that crossed the
 * line also splits exactly one bucket, {@code split}: its entries whose hash has bit {@code L} set move to the new
 * bucket {@code split + 2^L}, then {@code split} advances (and wraps to 0 with {@code L + 1}). So the table grows
 * one bucket at a time, each step rewriting one bucket chain plus a directory entry: an operation's redo stays
 * bounded by a couple of bucket chains no matter how large the map is, and a crash can never find the map
 * half-rehashed (each step is inside the transaction of the put that triggered it). Buckets are never merged
 * back; an overflow page that becomes empty is unlinked and freed.
 */
final class HashCore implements MapCore {
    /** Receives encoded entries. */
    interface RawVisitor {
        boolean visit(byte[] key, byte[] value);
    }

    final Session session;
    final Block root;
    private final NodePool pool;

    HashCore(Session session, Block root) {
        this.session = session;
        this.root = root;
        this.pool = new NodePool(session, root, HashMapLayout.POOL_OFFSET);
    }

    /** Writes the root fields, directory, first segment and bucket 0 of a new map. */
    static void initialize(Session session, long rootAddress) {
        HashCore c = new HashCore(session, session.load(rootAddress, StructureHeaderLayout.ROOT_BLOCK_LENGTH));
        Block dir = c.pool.allocate();
        dir.putByte(HashMapLayout.TABLE_KIND_OFFSET, HashMapLayout.KIND_DIRECTORY);
        c.root.putLong(HashMapLayout.DIRECTORY_OFFSET, dir.address);
        c.addSegment(0);
        Block bucket = c.pool.allocate();
        NodePage.init(bucket, KIND_BUCKET, 0);
        c.setHead(0, bucket.address);
        c.root.putLong(HashMapLayout.BUCKET_PAGES_OFFSET, 1);
        c.root.putLong(HashMapLayout.LEVEL_OFFSET, 0);
        c.root.putLong(HashMapLayout.SPLIT_OFFSET, 0);
        session.flush();
    }

    @Override
    public void flush() {
        session.flush();
    }

    @Override
    public long size() {
        return root.getLong(HashMapLayout.SIZE_OFFSET);
    }

    long liveBytes() {
        return root.getLong(HashMapLayout.LIVE_BYTES_OFFSET);
    }

    int level() {
        long l = root.getLong(HashMapLayout.LEVEL_OFFSET);
        if (l < 0 || l > 40) {
            throw new StructureCorruptException("hash map at " + root.address + " has level " + l);
        }
        return (int) l;
    }

    long split() {
        return root.getLong(HashMapLayout.SPLIT_OFFSET);
    }

    long bucketCount() {
        return (1L << level()) + split();
    }

    long bucketPages() {
        return root.getLong(HashMapLayout.BUCKET_PAGES_OFFSET);
    }

    long segments() {
        return root.getLong(HashMapLayout.SEGMENTS_OFFSET);
    }

    long directory() {
        return root.getLong(HashMapLayout.DIRECTORY_OFFSET);
    }

    NodePool pool() {
        return pool;
    }

    private void add(int offset, long delta) {
        if (delta != 0) { // an unchanged counter is not written: a same-size update then leaves the root page
            root.putLong(offset, root.getLong(offset) + delta); // alone, and updates of other keys do not conflict
        }
    }

    /** The bucket of hash {@code h} under the current level and split pointer. */
    long bucketOf(long h) {
        int l = level();
        long b = h & ((1L << l) - 1);
        if (b < split()) {
            b = h & ((1L << (l + 1)) - 1);
        }
        return b;
    }

    private Block table(long address) {
        return session.load(address, NODE_SIZE);
    }

    long head(long bucket) {
        long segment = table(directory()).getLong((int) entryOffset(bucket / FANOUT));
        return table(segment).getLong((int) entryOffset(bucket % FANOUT));
    }

    private void setHead(long bucket, long page) {
        long segment = table(directory()).getLong((int) entryOffset(bucket / FANOUT));
        table(segment).putLong((int) entryOffset(bucket % FANOUT), page);
    }

    private void addSegment(long index) {
        Block seg = pool.allocate();
        seg.putByte(HashMapLayout.TABLE_KIND_OFFSET, HashMapLayout.KIND_SEGMENT);
        table(directory()).putLong((int) entryOffset(index), seg.address);
        add(HashMapLayout.SEGMENTS_OFFSET, 1);
    }

    private NodePage load(long address) {
        NodePage p = new NodePage(session.load(address, NODE_SIZE));
        if (p.kind() != KIND_BUCKET && !session.tx.doomed()) { // doomed: a page not fetched yet, empty, no link
            throw new StructureCorruptException("hash map at " + root.address + ": page " + address
                    + " in a bucket chain has kind '" + (char) p.kind() + "'");
        }
        return p;
    }

    /** The pages of the chain of {@code bucket}, head first. */
    List<NodePage> chain(long bucket) {
        List<NodePage> pages = new ArrayList<>(2);
        long at = head(bucket);
        while (at != 0) {
            if (pages.size() > bucketPages()) {
                throw new StructureCorruptException("hash map at " + root.address + ": chain of bucket " + bucket
                        + " longer than the " + bucketPages() + " bucket pages (cycle)");
            }
            NodePage p = load(at);
            pages.add(p);
            at = p.link0();
        }
        return pages;
    }

    @Override
    public byte[] get(byte[] key) {
        NodePage p = find(key);
        return p == null ? null : Records.value(session, p, foundSlot);
    }

    @Override
    public <T> T get(byte[] key, ValueCodec<T> codec) {
        NodePage p = find(key);
        return p == null ? null : Records.decodeValue(session, p, foundSlot, codec);
    }

    /** The slot of the key {@link #find} found last. */
    private int foundSlot;

    /**
     * The page of the chain of {@code key}'s bucket holding {@code key} (its slot in {@link #foundSlot}), or null:
     * the chain is walked page by page, stopping at the key, with the same cycle guard as {@link #chain}.
     */
    private NodePage find(byte[] key) {
        long bucket = bucketOf(KeyHash.hash64(key));
        long at = head(bucket);
        long limit = bucketPages();
        long walked = 0;
        while (at != 0) {
            if (walked++ > limit) {
                throw new StructureCorruptException("hash map at " + root.address + ": chain of bucket " + bucket
                        + " longer than the " + limit + " bucket pages (cycle)");
            }
            NodePage p = load(at);
            int i = p.search(key);
            if (i >= 0) {
                foundSlot = i;
                return p;
            }
            at = p.link0();
        }
        return null;
    }

    /** Inserts or replaces; returns the previous value. With {@code onlyIfAbsent}, never replaces. */
    @Override
    public byte[] put(byte[] key, byte[] value, boolean onlyIfAbsent) {
        List<NodePage> chain = chain(bucketOf(KeyHash.hash64(key)));
        for (NodePage p : chain) {
            int i = p.search(key);
            if (i >= 0) {
                byte[] old = Records.value(session, p, i);
                if (onlyIfAbsent) {
                    return old;
                }
                int shrink = Records.overwriteInPlace(session.tx, p, i, value);
                if (shrink >= 0) {
                    if (shrink > 0) {
                        add(HashMapLayout.LIVE_BYTES_OFFSET, -shrink);
                    }
                    return old;
                }
                int oldLength = p.recordLength(i) + SLOT_LENGTH;
                Records.freeBlob(session.tx, p, i);
                p.remove(i);
                byte[] rec = Records.leaf(session.tx, key, value);
                if (!p.insert(i, rec)) {
                    insertIntoChain(chain, key, rec);
                }
                add(HashMapLayout.LIVE_BYTES_OFFSET, rec.length + SLOT_LENGTH - oldLength);
                return old;
            }
        }
        byte[] rec = Records.leaf(session.tx, key, value);
        insertIntoChain(chain, key, rec);
        add(HashMapLayout.LIVE_BYTES_OFFSET, rec.length + SLOT_LENGTH);
        add(HashMapLayout.SIZE_OFFSET, 1);
        long buckets = bucketCount();
        if (buckets < HashMapLayout.MAX_BUCKETS && liveBytes() > buckets * HashMapLayout.SPLIT_THRESHOLD_BYTES) {
            splitOne();
        }
        return null;
    }

    private void insertIntoChain(List<NodePage> chain, byte[] key, byte[] rec) {
        for (NodePage p : chain) {
            if (p.hasRoom(rec.length)) {
                p.insert(-p.search(key) - 1, rec);
                return;
            }
        }
        NodePage fresh = NodePage.init(pool.allocate(), KIND_BUCKET, 0);
        add(HashMapLayout.BUCKET_PAGES_OFFSET, 1);
        chain.get(chain.size() - 1).setLink0(fresh.address());
        fresh.append(rec);
        chain.add(fresh);
    }

    @Override
    public byte[] remove(byte[] key) {
        long bucket = bucketOf(KeyHash.hash64(key));
        List<NodePage> chain = chain(bucket);
        for (int c = 0; c < chain.size(); c++) {
            NodePage p = chain.get(c);
            int i = p.search(key);
            if (i < 0) {
                continue;
            }
            byte[] old = Records.value(session, p, i);
            add(HashMapLayout.LIVE_BYTES_OFFSET, -(p.recordLength(i) + SLOT_LENGTH));
            add(HashMapLayout.SIZE_OFFSET, -1);
            Records.freeBlob(session.tx, p, i);
            p.remove(i);
            if (p.count() == 0 && chain.size() > 1) {
                if (c == 0) {
                    setHead(bucket, p.link0());
                } else {
                    chain.get(c - 1).setLink0(p.link0());
                }
                pool.free(p.block);
                add(HashMapLayout.BUCKET_PAGES_OFFSET, -1);
            }
            return old;
        }
        return null;
    }

    /** One step of linear hashing: splits bucket {@code split} into itself and {@code split + 2^level}. */
    private void splitOne() {
        int l = level();
        long s = split();
        long target = s + (1L << l);
        List<NodePage> chain = chain(s);
        List<byte[]> stay = new ArrayList<>();
        List<byte[]> move = new ArrayList<>();
        for (NodePage p : chain) {
            for (int i = 0; i < p.count(); i++) {
                byte[] rec = p.record(i);
                boolean high = ((KeyHash.hash64(Records.key(rec)) >>> l) & 1) != 0;
                (high ? move : stay).add(rec);
            }
        }
        stay.sort(Records::compareKeys);
        move.sort(Records::compareKeys);
        fill(chain, stay);
        if (target % FANOUT == 0) {
            addSegment(target / FANOUT);
        }
        NodePage head = NodePage.init(pool.allocate(), KIND_BUCKET, 0);
        add(HashMapLayout.BUCKET_PAGES_OFFSET, 1);
        List<NodePage> fresh = new ArrayList<>();
        fresh.add(head);
        fill(fresh, move);
        setHead(target, head.address());
        if (s + 1 == 1L << l) {
            root.putLong(HashMapLayout.LEVEL_OFFSET, l + 1);
            root.putLong(HashMapLayout.SPLIT_OFFSET, 0);
        } else {
            root.putLong(HashMapLayout.SPLIT_OFFSET, s + 1);
        }
    }

    /**
     * Rewrites {@code pages} (a chain, head first) to hold exactly {@code records} in order, adding pages as
     * needed and freeing the ones left over (the head always stays).
     */
    private void fill(List<NodePage> pages, List<byte[]> records) {
        int used = 0;
        NodePage current = pages.get(0);
        current.rebuild(records, 0, 0);
        for (byte[] rec : records) {
            if (!current.hasRoom(rec.length)) {
                used++;
                if (used < pages.size()) {
                    current = pages.get(used);
                    current.rebuild(records, 0, 0);
                } else {
                    NodePage next = NodePage.init(pool.allocate(), KIND_BUCKET, 0);
                    add(HashMapLayout.BUCKET_PAGES_OFFSET, 1);
                    current.setLink0(next.address());
                    pages.add(next);
                    current = next;
                }
            }
            current.append(rec);
        }
        for (int i = used + 1; i < pages.size(); i++) {
            pool.free(pages.get(i).block);
            add(HashMapLayout.BUCKET_PAGES_OFFSET, -1);
        }
        current.setLink0(0);
    }

    /**
     * Visits the entries of buckets {@code from .. from + maxBuckets - 1}; returns the next bucket to visit, or -1
     * when the last bucket was visited (or the visitor stopped).
     */
    long visitBuckets(long from, long maxBuckets, RawVisitor visitor) {
        long end = Math.min(bucketCount(), from + maxBuckets);
        for (long b = from; b < end; b++) {
            long at = head(b);
            long hops = 0;
            while (at != 0) {
                if (++hops > bucketPages()) {
                    throw new StructureCorruptException("hash map at " + root.address + ": cycle in bucket " + b);
                }
                NodePage p = new NodePage(session.peek(at, NODE_SIZE));
                for (int i = 0; i < p.count(); i++) {
                    if (!visitor.visit(p.key(i), Records.value(session, p, i))) {
                        return -1;
                    }
                }
                at = p.link0();
            }
        }
        return end < bucketCount() ? end : -1;
    }
}
