package io.asymnvm.core.layout;

/**
 * Region ids (the rkeys of the fabric). The heap is region {@link #HEAP}; each frontend owns three regions
 * packed as {@code FRONTEND_BASE + frontendId * 4 + kind}.
 */
public final class RegionIds {
    public static final int HEAP = 1;
    /**
     * The slab owner table ({@link SlabTableLayout}); registered for replication peers only (a backend shipping to
     * its mirror reads the mirror's table), never granted to a frontend.
     */
    public static final int SLAB_TABLE = 2;
    public static final int FRONTEND_BASE = 16;
    public static final int KIND_CONTROL = 0;
    public static final int KIND_SEMANTIC = 1;
    public static final int KIND_REDO = 2;
    private static final int KINDS = 4;

    private RegionIds() {
    }

    public static int pack(int frontendId, int kind) {
        if (frontendId < 0 || kind < 0 || kind >= KINDS) {
            throw new IllegalArgumentException("bad frontend region: frontend " + frontendId + ", kind " + kind);
        }
        return FRONTEND_BASE + frontendId * KINDS + kind;
    }

    public static int control(int frontendId) {
        return pack(frontendId, KIND_CONTROL);
    }

    public static int semantic(int frontendId) {
        return pack(frontendId, KIND_SEMANTIC);
    }

    public static int redo(int frontendId) {
        return pack(frontendId, KIND_REDO);
    }

    /** The frontend a region belongs to, or -1 for shared regions. */
    public static int frontendOf(int regionId) {
        return regionId < FRONTEND_BASE ? -1 : (regionId - FRONTEND_BASE) / KINDS;
    }

    public static int kindOf(int regionId) {
        return regionId < FRONTEND_BASE ? -1 : (regionId - FRONTEND_BASE) % KINDS;
    }
}
