package io.asymnvm.examples.kv;

import picocli.CommandLine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

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

    /** The command-line name ("btree", "hash"). */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
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
        for (StructureKind k : values()) {
            if (k.cliName().equalsIgnoreCase(name)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown structure '" + name + "' (expected one of: " + names() + ")");
    }

    public static String names() {
        return Arrays.stream(values()).map(StructureKind::cliName).collect(Collectors.joining(", "));
    }

    /** Picocli converter: a bad name is a usage error. */
    public static final class Converter implements CommandLine.ITypeConverter<StructureKind> {
        @Override
        public StructureKind convert(String value) {
            try {
                return parse(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** Picocli completion candidates and ${COMPLETION-CANDIDATES}. */
    public static final class Names implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return Arrays.stream(values()).map(StructureKind::cliName).iterator();
        }
    }
}
