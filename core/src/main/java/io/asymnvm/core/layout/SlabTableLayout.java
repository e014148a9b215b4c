package io.asymnvm.core.layout;

/**
 * The slab owner table: one 8-byte little-endian word per slab, written with a single atomic 8-byte store
 * and persisted before a grant is acknowledged.
 *
 * <pre>
 * word = 0                      free
 * word = frontendId + 1         owned by frontendId
 * </pre>
 */
public final class SlabTableLayout {
    public static final int ENTRY_LENGTH = 8;
    public static final long FREE = 0;

    private SlabTableLayout() {
    }

    public static long entryOffset(long slabTableOffset, long slabIndex) {
        return slabTableOffset + slabIndex * ENTRY_LENGTH;
    }

    public static long ownerWord(int frontendId) {
        return frontendId + 1L;
    }

    /** The owning frontend, or -1 when free. */
    public static int ownerOf(long word) {
        return word == FREE ? -1 : (int) (word - 1);
    }
}
