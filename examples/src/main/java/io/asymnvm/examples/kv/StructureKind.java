package io.asymnvm.examples.kv;

import io.asymnvm.examples.support.CliEnum;

/** The prebuilt structure a key-value store or a map benchmark runs on, by its command-line name. */
public enum StructureKind {
    /** {@link io.asymnvm.structures.PersistentBTree}: ordered, supports range scans. */
    BTREE("B+tree"),
    /** {@link io.asymnvm.structures.PersistentHashMap}: unordered, no scans. */
    HASH("hash map");

    private final String displayName;

    StructureKind(String displayName) {
        this.displayName = displayName;
    }

    /** The command-line name. */
    public String cliName() {
        return CliEnum.cliName(this);
    }

    /** For messages ("B+tree", "hash map"). */
    public String displayName() {
        return displayName;
    }

    /** Whether the structure keeps keys in order (and so can scan a key range). */
    public boolean ordered() {
        return this == BTREE;
    }

    /** Parses a command-line name, case-insensitively; the message of a bad one lists the valid names. */
    public static StructureKind parse(String name) {
        return CliEnum.parse(StructureKind.class, "structure", name);
    }

    public static String names() {
        return CliEnum.names(StructureKind.class);
    }

    /** Picocli converter: a bad name is a usage error. */
    public static final class Converter extends CliEnum.Converter<StructureKind> {
        public Converter() {
            super(StructureKind.class, "structure");
        }
    }

    /** Picocli completion candidates and ${COMPLETION-CANDIDATES}. */
    public static final class Names extends CliEnum.Names<StructureKind> {
        public Names() {
            super(StructureKind.class);
        }
    }
}
