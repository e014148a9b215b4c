package io.asymnvm.structures.layout;

/**
 * Root fields and directory of a persistent hash map (linear hashing). Bucket {@code b} is a chain of bucket
 * pages ({@link NodePageLayout}, {@code kind 'B'}, chained through {@code link0}; every bucket has a head page).
 * The bucket heads are found through a two-level directory: a directory page of {@link #FANOUT} segment
 * addresses, each segment page holding {@link #FANOUT} bucket head addresses.
 *
 * <pre>
 * root fields (after StructureHeaderLayout's header):
 * 128 size(8)          number of entries
 * 136 liveBytes(8)     slot and record bytes of every bucket page (drives growth)
 * 144 level(8)         L: buckets 0 .. 2^L + split - 1 exist
 * 152 split(8)         next bucket to split, 0 .. 2^L - 1
 * 160 directory(8)     address of the directory page
 * 168 bucketPages(8)   bucket pages in use (heads and overflow pages)
 * 176 segments(8)      segment pages in use
 * 184 reserved(8)
 * 192 node pool(32)    see NodePoolLayout
 * 224 reserved(32)
 *
 * directory / segment page (one pool node):
 *   0 kind(1) 'D' or 'S' | reserved(7)
 *   8 entry[FANOUT](8)   segment addresses / bucket head addresses, 0 = none yet
 * </pre>
 *
 * The bucket of hash {@code h}: {@code b = h mod 2^L}, and {@code b = h mod 2^(L+1)} if {@code b < split}.
 */
public final class HashMapLayout {
    public static final int TYPE_ID = 2;
    public static final int SIZE_OFFSET = 128;
    public static final int LIVE_BYTES_OFFSET = 136;
    public static final int LEVEL_OFFSET = 144;
    public static final int SPLIT_OFFSET = 152;
    public static final int DIRECTORY_OFFSET = 160;
    public static final int BUCKET_PAGES_OFFSET = 168;
    public static final int SEGMENTS_OFFSET = 176;
    public static final int POOL_OFFSET = 192;

    public static final byte KIND_DIRECTORY = 'D';
    public static final byte KIND_SEGMENT = 'S';
    public static final int TABLE_KIND_OFFSET = 0;
    public static final int TABLE_ENTRIES_OFFSET = 8;
    public static final int FANOUT = (NodePageLayout.NODE_SIZE - TABLE_ENTRIES_OFFSET) / 8;
    public static final long MAX_BUCKETS = (long) FANOUT * FANOUT;
    /** Average live bytes per bucket above which one more bucket is split (3/4 of a page). */
    public static final int SPLIT_THRESHOLD_BYTES = NodePageLayout.CAPACITY * 3 / 4;

    private HashMapLayout() {
    }

    public static long entryOffset(long index) {
        return TABLE_ENTRIES_OFFSET + 8L * index;
    }
}
