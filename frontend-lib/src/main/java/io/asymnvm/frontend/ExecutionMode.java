package io.asymnvm.frontend;

import java.util.Locale;

/**
 * How a frontend runs transactions ({@link FrontendOptions.Builder#mode}).
 *
 * <p>{@link #ASYMNVM} is the design (DESIGN §2, §3): reads from the DRAM page cache, one round trip per commit,
 * redo shipped in batches off the commit path. {@link #NAIVE} is AsymNVM's unoptimised baseline, kept to measure
 * what the design buys (issue 8, goal 6): no page cache (every page a transaction reads is a remote READ, each
 * time it is read), transactions run one at a time under one lock, and a transaction's writes reach the heap
 * synchronously before its call returns (its semantic record made durable, then its redo shipped alone and
 * applied by the backend). Transactions stay atomic and durable, recovery is unchanged.
 */
public enum ExecutionMode {
    /** The design: page cache, group commit, batched redo, parallel read-only calls. */
    ASYMNVM,
    /** The baseline: every read remote, every transaction written through to the heap before it returns. */
    NAIVE;

    /** Parses {@code asymnvm} or {@code naive}, case-insensitively; a bad name lists the valid ones. */
    public static ExecutionMode parse(String name) {
        for (ExecutionMode m : values()) {
            if (m.name().equalsIgnoreCase(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + name + "': expected one of asymnvm, naive");
    }

    /** The command-line name. */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
