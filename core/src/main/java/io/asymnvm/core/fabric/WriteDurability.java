package io.asymnvm.core.fabric;

import java.util.ArrayList;
import java.util.List;

/**
 * What the NIC knows about the durability of the one-sided WRITEs into one registered window, so that the node
 * does not persist again what a FLUSH already persisted (issue 8 goal 7; "Correct, Fast Remote Persistence": the
 * responder's FLUSH is what makes a WRITE durable, and a second write-back of the same lines is pure
 * amplification). A backend's replayer asks {@link #isDurable} before it persists a redo batch, and the FLUSH
 * watermark check before it persists semantic records.
 *
 * <h2>Protocol</h2>
 * The NIC calls {@link #storing} before it stores a WRITE's bytes and {@link #stored} once they are stored (that
 * numbers the write in completion order). Whoever persists a range (a FLUSH, or the node itself, e.g. the replayer
 * persisting a batch no FLUSH had covered yet) takes {@link #completed()} before it persists and calls
 * {@link #flushed} (a FLUSH) or {@link #persisted} (the node) after: only writes whose store had completed before
 * the persist started are marked durable. A range is durable only if persisted writes cover every byte of it and
 * no write into it is pending or was stored after its persist, so a later re-write of the same bytes (a re-posted
 * batch) makes the range not durable again until it is persisted again.
 *
 * <h2>Each byte persisted once, whichever comes first</h2>
 * A FLUSH that finds its range already durable (the replayer was faster and persisted the batch) skips its persist,
 * and the replayer skips a batch a FLUSH already persisted. So a write is remembered until both happened: the node
 * {@link #release}s it (it will not ask again) and a FLUSH covered it; then it is forgotten.
 *
 * <h2>Conservative by construction</h2>
 * Knowledge only ever says "durable" for bytes this NIC stored and then persisted in this incarnation: after a
 * restart, for bytes written any other way (a mirror's shipping, a recovery), or when the record of writes
 * overflowed ({@value #MAX_WRITES} writes remembered; everything is then forgotten), the answer is "not known
 * durable" and the caller persists as before. Every store into a window that has a WriteDurability goes through
 * {@link #storing} (EmulatedNic), which is what keeps a remembered persisted write true. Thread-safe (NIC threads
 * and the replayer).
 */
public final class WriteDurability {
    /**
     * Writes remembered at most; beyond it the record is dropped (callers then persist themselves). Every call
     * scans the record, so the bound is the cost of a WRITE and a FLUSH: a frontend keeps a few dozen writes
     * alive (records posted and not yet stamped, redo batches not yet both flushed and replayed), but writes that
     * nobody asks about again (a client's unstamped FLUSH of its semantic ring, as the raw round trip of
     * {@code bench commit} does) pile up to the bound. At 4,096 they doubled that round trip (52 to 121 us p50).
     */
    public static final int MAX_WRITES = 256;

    private static final class Write {
        final long from;
        final long to;
        /** Completion number once stored, 0 while the store is in progress. */
        long seq;
        boolean persisted;
        /** A FLUSH covered it (persisted it, or found it durable). */
        boolean flushed;
        /** The node will not ask about it again. */
        boolean released;

        Write(long from, long to) {
            this.from = from;
            this.to = to;
        }
    }

    private final List<Write> writes = new ArrayList<>();
    private long completed;
    private long overflows;

    /** The NIC is about to store {@code [at, at + length)} of the backing region. */
    public synchronized void storing(long at, long length) {
        if (writes.size() >= MAX_WRITES) {
            writes.clear();
            overflows++;
        }
        writes.add(new Write(at, at + length));
    }

    /** The store announced by {@link #storing} for exactly this range is complete. */
    public synchronized void stored(long at, long length) {
        for (int i = writes.size() - 1; i >= 0; i--) {
            Write w = writes.get(i);
            if (w.seq == 0 && w.from == at && w.to == at + length) {
                w.seq = ++completed;
                return;
            }
        }
    }

    /** How many stores completed so far: a FLUSH takes this before it persists. */
    public synchronized long completed() {
        return completed;
    }

    /**
     * The node persisted {@code [at, at + length)} itself, having started after store number {@code upTo}
     * completed: every write inside the range completed by then is durable (a later FLUSH of it need not persist).
     */
    public synchronized void persisted(long at, long length, long upTo) {
        mark(at, length, upTo, false);
    }

    /**
     * A FLUSH made {@code [at, at + length)} durable (persisted it, or found it {@link #isDurable} and skipped it),
     * having started after store number {@code upTo} completed. Writes inside it the node released are forgotten.
     */
    public synchronized void flushed(long at, long length, long upTo) {
        mark(at, length, upTo, true);
        writes.removeIf(w -> w.flushed && w.released);
    }

    private void mark(long at, long length, long upTo, boolean flush) {
        long to = at + length;
        for (Write w : writes) {
            if (w.from >= at && w.to <= to && w.seq > 0 && w.seq <= upTo) {
                w.persisted = true;
                w.flushed |= flush;
            }
        }
    }

    /**
     * Whether every byte of {@code [at, at + length)} was stored by a write this NIC then persisted, with no write
     * into the range pending or not yet persisted.
     */
    public synchronized boolean isDurable(long at, long length) {
        long to = at + length;
        List<Write> covering = new ArrayList<>();
        for (Write w : writes) {
            if (w.to <= at || w.from >= to) {
                continue;
            }
            if (!w.persisted) {
                return false;
            }
            covering.add(w);
        }
        covering.sort((a, b) -> Long.compare(a.from, b.from));
        long reached = at;
        for (Write w : covering) {
            if (w.from > reached) {
                return false;
            }
            reached = Math.max(reached, w.to);
        }
        return length > 0 && reached >= to;
    }

    /**
     * The node no longer asks about the writes inside {@code [at, at + length)}: those a FLUSH covered are
     * forgotten, the others once a FLUSH covers them ({@link #flushed}), so that it can skip what the node persisted.
     */
    public synchronized void release(long at, long length) {
        long to = at + length;
        for (Write w : writes) {
            if (w.from >= at && w.to <= to) {
                w.released = true;
            }
        }
        writes.removeIf(w -> w.flushed && w.released);
    }

    /**
     * Forgets the writes inside {@code [at, at + length)} at once, whether or not a FLUSH covered them (the node
     * persisted them after their FLUSH, or never will ask: no later FLUSH needs to know).
     */
    public synchronized void forget(long at, long length) {
        long to = at + length;
        writes.removeIf(w -> w.from >= at && w.to <= to);
    }

    /** How often the record overflowed and was dropped. */
    public synchronized long overflows() {
        return overflows;
    }

    /** Writes remembered now. */
    public synchronized int size() {
        return writes.size();
    }
}
