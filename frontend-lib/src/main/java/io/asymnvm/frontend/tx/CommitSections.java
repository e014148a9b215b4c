package io.asymnvm.frontend.tx;

import java.util.concurrent.atomic.LongAdder;

/**
 * How long optimistic writers ({@link OptimisticWriters}) hold the execution lock {@code exec} at commit (the
 * ordering lock: validation, transaction id, semantic record, install, redo append) and how long they wait for it:
 * the serial part of a commit, which bounds how writers scale (issue 8 goal 2). Counted per section, in
 * nanoseconds, with {@link LongAdder}s (no shared word between writers). Calls run wholly under the lock (too many
 * conflicts, allocation) are not counted here.
 *
 * <p>Threads: any; a snapshot is not atomic across its three counts.
 */
public final class CommitSections {
    private final LongAdder sections = new LongAdder();
    private final LongAdder holdNanos = new LongAdder();
    private final LongAdder waitNanos = new LongAdder();

    /** One section: asked for the lock at {@code asked}, got it at {@code acquired}, released it at {@code released}. */
    void record(long asked, long acquired, long released) {
        sections.increment();
        waitNanos.add(acquired - asked);
        holdNanos.add(released - acquired);
    }

    public Snapshot snapshot() {
        return new Snapshot(sections.sum(), holdNanos.sum(), waitNanos.sum());
    }

    /** Counts so far: sections, and nanoseconds held and waited over all of them. */
    public record Snapshot(long sections, long holdNanos, long waitNanos) {
        /** The counts since {@code earlier}. */
        public Snapshot minus(Snapshot earlier) {
            return new Snapshot(sections - earlier.sections, holdNanos - earlier.holdNanos,
                    waitNanos - earlier.waitNanos);
        }

        /** Mean hold time of a section in microseconds (0 with no section). */
        public double holdMicrosPerSection() {
            return sections == 0 ? 0.0 : holdNanos / 1000.0 / sections;
        }

        /** Mean wait for the lock in microseconds (0 with no section). */
        public double waitMicrosPerSection() {
            return sections == 0 ? 0.0 : waitNanos / 1000.0 / sections;
        }
    }
}
