package io.asymnvm.examples.commit;

import picocli.CommandLine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The fabrics a commit measurement can run over, by their command-line names. */
public enum FabricKind {
    /** In-process: the backend runs in this JVM, operations are method calls. */
    LOCAL,
    /** Loopback TCP to an in-process backend's emulated NIC. */
    TCP;

    /** The command-line name ("local", "tcp"). */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a command-line name, case-insensitively; the message of a bad one lists the valid names. */
    public static FabricKind parse(String name) {
        for (FabricKind k : values()) {
            if (k.cliName().equalsIgnoreCase(name)) {
                return k;
            }
        }
        throw new IllegalArgumentException("unknown fabric '" + name + "' (expected one of: " + names() + ")");
    }

    public static String names() {
        return Arrays.stream(values()).map(FabricKind::cliName).collect(Collectors.joining(", "));
    }

    /** Picocli converter: a bad name is a usage error. */
    public static final class Converter implements CommandLine.ITypeConverter<FabricKind> {
        @Override
        public FabricKind convert(String value) {
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
            return Arrays.stream(values()).map(FabricKind::cliName).iterator();
        }
    }
}
