package io.asymnvm.core.fabric;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counters every fabric connection keeps. Counts, not timings: they do not depend on machine noise, so tests
 * and benchmarks can assert on them (round trips per commit, bytes persisted per transaction).
 */
public final class FabricCounters {
    private final LongAdder reads = new LongAdder();
    private final LongAdder writes = new LongAdder();
    private final LongAdder atomics = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder controlCalls = new LongAdder();
    private final LongAdder roundTripsWaited = new LongAdder();
    private final LongAdder bytesSent = new LongAdder();
    private final LongAdder bytesPersisted = new LongAdder();
    private final LongAdder persistCalls = new LongAdder();
    private final LongAdder parks = new LongAdder();

    /** An immutable copy of every counter. */
    public record Snapshot(long reads, long writes, long atomics, long flushes, long controlCalls,
                           long roundTripsWaited, long bytesSent, long bytesPersisted, long persistCalls) {
        public Snapshot plus(Snapshot o) {
            return new Snapshot(reads + o.reads, writes + o.writes, atomics + o.atomics, flushes + o.flushes,
                    controlCalls + o.controlCalls, roundTripsWaited + o.roundTripsWaited, bytesSent + o.bytesSent,
                    bytesPersisted + o.bytesPersisted, persistCalls + o.persistCalls);
        }

        public Snapshot minus(Snapshot o) {
            return new Snapshot(reads - o.reads, writes - o.writes, atomics - o.atomics, flushes - o.flushes,
                    controlCalls - o.controlCalls, roundTripsWaited - o.roundTripsWaited, bytesSent - o.bytesSent,
                    bytesPersisted - o.bytesPersisted, persistCalls - o.persistCalls);
        }
    }

    public void read(long bytes) {
        reads.increment();
        bytesSent.add(bytes);
    }

    public void write(long bytes) {
        writes.increment();
        bytesSent.add(bytes);
    }

    public void atomic() {
        atomics.increment();
        bytesSent.add(16);
    }

    public void flush() {
        flushes.increment();
    }

    public void control(long bytes) {
        controlCalls.increment();
        bytesSent.add(bytes);
    }

    public void roundTripWaited() {
        roundTripsWaited.increment();
    }

    public void persisted(long bytes, long calls) {
        bytesPersisted.add(bytes);
        persistCalls.add(calls);
    }

    /** A waiter parked its thread (see {@link WaitPolicy}); not part of {@link Snapshot}. */
    public void parked() {
        parks.increment();
    }

    /** Times a waiter on this connection parked its thread: 0 under {@link WaitPolicy#spin()}. */
    public long parks() {
        return parks.sum();
    }

    public Snapshot snapshot() {
        return new Snapshot(reads.sum(), writes.sum(), atomics.sum(), flushes.sum(), controlCalls.sum(),
                roundTripsWaited.sum(), bytesSent.sum(), bytesPersisted.sum(), persistCalls.sum());
    }
}
