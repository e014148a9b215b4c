package io.asymnvm.structures;

import io.asymnvm.structures.layout.BTreeLayout;
import io.asymnvm.structures.layout.HashMapLayout;

/** The kinds of persistent structure, with the stable type ids stored in their root headers. */
public enum StructureType {
    BTREE(BTreeLayout.TYPE_ID, "B+tree"),
    HASH_MAP(HashMapLayout.TYPE_ID, "hash map");

    private final int id;
    private final String displayName;

    StructureType(int id, String displayName) {
        this.id = id;
        this.displayName = displayName;
    }

    public int id() {
        return id;
    }

    public String displayName() {
        return displayName;
    }

    /** The type with this id, or an {@link IllegalArgumentException} naming it. */
    private static final StructureType[] ALL = values();

    public static StructureType fromId(int id) {
        for (StructureType t : ALL) {
            if (t.id == id) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown structure type id " + id);
    }
}
