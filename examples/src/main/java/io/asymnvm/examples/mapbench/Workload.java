package io.asymnvm.examples.mapbench;

import picocli.CommandLine;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The YCSB core workloads this benchmark runs: read/update mixes over zipfian keys. */
public enum Workload {
    /** Update heavy: 50% reads, 50% updates (YCSB workload A). */
    A(0.50),
    /** Read mostly: 95% reads, 5% updates (YCSB workload B). */
    B(0.95),
    /** Read only (YCSB workload C). */
    C(1.00),
    /** Updates only (not a YCSB workload): the writers' scaling, e.g. with {@code --disjoint} keys. */
    U(0.00);

    private final double readProportion;

    Workload(double readProportion) {
        this.readProportion = readProportion;
    }

    public double readProportion() {
        return readProportion;
    }

    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** E.g. "a (50% read / 50% update)". */
    public String describe() {
        long reads = Math.round(readProportion * 100);
        return String.format(Locale.ROOT, "%s (%d%% read / %d%% update)", cliName(), reads, 100 - reads);
    }

    public static Workload parse(String name) {
        for (Workload w : values()) {
            if (w.cliName().equalsIgnoreCase(name)) {
                return w;
            }
        }
        throw new IllegalArgumentException("unknown workload '" + name + "' (expected one of: "
                + Arrays.stream(values()).map(Workload::cliName).collect(Collectors.joining(", ")) + ")");
    }

    /** Picocli converter: a bad name is a usage error. */
    public static final class Converter implements CommandLine.ITypeConverter<Workload> {
        @Override
        public Workload convert(String value) {
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
            return Arrays.stream(values()).map(Workload::cliName).iterator();
        }
    }
}
