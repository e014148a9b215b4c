package io.asymnvm.core.layout;

/**
 * The header at the start of every granted slab: the frontend's block allocator metadata. Written once by the
 * backend when it grants the slab, then only through redo by the owning frontend, so it is consistent after
 * replay without any heap scan. The live count tells the owner (and the backend, which checks it when a slab is
 * returned) that every block of the slab is free.
 *
 * <pre>
 *   0 magic(8)            "SLABHDR1"
 *   8 bump(8)             slab-relative offset of the first never-allocated byte
 *  16 root(8)             heap address of the owner's root object (used in the owner's first slab), 0 = none
 *  24 directory(8)        heap address of the owner's named-root directory (first slab only), 0 = none
 *  32 live(8)             allocated blocks + 1; 1 = empty, 0 = not counted (granted by a backend before the
 *                         count existed: such a slab is never returned)
 *  40 reserved(24)
 *  64 freeHead[class](8) x CLASS_COUNT   heap address of the first free block of each size class, 0 = empty
 * 256 first block
 *
 * block: header(8) = magic(4) | sizeClass(4), then the payload; a free block's payload starts with the heap
 * address of the next free block of its class.
 * </pre>
 * Size class {@code c} holds payloads of up to {@code MIN_BLOCK << c} bytes.
 */
public final class SlabHeaderLayout {
    public static final long MAGIC = 0x3152444842414C53L; // "SLABHDR1" little-endian
    public static final int MAGIC_OFFSET = 0;
    public static final int BUMP_OFFSET = 8;
    public static final int ROOT_OFFSET = 16;
    public static final int DIRECTORY_OFFSET = 24;
    public static final int LIVE_OFFSET = 32;
    /** The live word of a counted slab without allocated blocks (written by the backend at a grant). */
    public static final long LIVE_EMPTY = 1;
    /** The live word of a slab whose blocks are not counted. */
    public static final long LIVE_UNCOUNTED = 0;
    public static final int FREE_HEADS_OFFSET = 64;
    public static final int CLASS_COUNT = 20;
    public static final int HEADER_LENGTH = 256;
    public static final int MIN_BLOCK = 16;
    public static final int BLOCK_HEADER_LENGTH = 8;
    public static final int BLOCK_MAGIC = 0x4B4C4221; // "!BLK"

    private SlabHeaderLayout() {
    }

    public static long freeHeadOffset(int sizeClass) {
        return FREE_HEADS_OFFSET + 8L * sizeClass;
    }

    /** Smallest class whose payload holds {@code size} bytes, or -1 if none does. */
    public static int sizeClassFor(long size) {
        for (int c = 0; c < CLASS_COUNT; c++) {
            if ((long) MIN_BLOCK << c >= size) {
                return c;
            }
        }
        return -1;
    }

    public static long payloadSize(int sizeClass) {
        return (long) MIN_BLOCK << sizeClass;
    }

    public static long blockSize(int sizeClass) {
        return BLOCK_HEADER_LENGTH + payloadSize(sizeClass);
    }

    public static long blockHeader(int sizeClass) {
        return ((long) sizeClass << 32) | (BLOCK_MAGIC & 0xFFFFFFFFL);
    }

    /** The size class of a block header word, or -1 if the word is not a block header. */
    public static int sizeClassOf(long header) {
        if ((int) header != BLOCK_MAGIC) {
            return -1;
        }
        int c = (int) (header >>> 32);
        return c >= 0 && c < CLASS_COUNT ? c : -1;
    }
}
