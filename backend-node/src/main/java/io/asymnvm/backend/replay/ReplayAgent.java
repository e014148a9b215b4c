package io.asymnvm.backend.replay;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.fabric.WriteDurability;
import io.asymnvm.core.layout.ControlBlockLayout.Checkpoint;
import io.asymnvm.core.layout.LogRecordLayout;
import io.asymnvm.core.layout.RedoBatchLayout;
import io.asymnvm.core.region.PersistentRegion;
import io.asymnvm.recovery.log.RingDamage;
import io.asymnvm.recovery.log.RingReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The replayer (DESIGN §2 step 5): reads complete, CRC-valid redo batches of every frontend in ring order,
 * applies them to the heap, persists the touched ranges, then atomically advances the frontend's checkpoint
 * ({@code appliedTxId}, redo head, semantic head). A batch that is not yet completely written reads as invalid
 * and is simply retried later; one that is valid but writes outside the frontend's slabs, or does not continue
 * the transaction sequence, stops replay for that frontend only (logged, reported on attach). An invalid batch
 * followed by a valid one is damaged, not incomplete: it quarantines its frontend ({@link RingDamage}).
 *
 * <p>What may be applied is a {@link ReplayGate}'s decision: on a backend, writes only into the frontend's own
 * slabs; on a mirror, only what its backend shipped (io.asymnvm.backend.mirror).
 *
 * <p>Replay is idempotent: a crash after applying but before the checkpoint replays the same batch again
 * with the same absolute bytes. One thread; {@link #doWork()} returns the number of batches applied.
 */
public final class ReplayAgent implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ReplayAgent.class);
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** The unit of write-back: heap ranges are persisted as whole 64-byte lines. */
    static final int CACHE_LINE = 64;

    private final PersistentRegion region;
    private final long heapBase;
    private final FrontendLog[] logs;
    private final long[] cursors;
    private volatile ReplayGate gate;
    private final AtomicLong idlePasses = new AtomicLong();
    private final AtomicLong batchesApplied = new AtomicLong();
    private volatile boolean running = true;
    private volatile Error failure;
    private volatile Thread thread;

    public ReplayAgent(PersistentRegion region, long heapBase, int pageSize, FrontendLog[] logs, SlabTable slabs) {
        this(region, heapBase, pageSize, logs, ReplayGate.ownership(slabs));
    }

    /** With {@code gate} deciding what may be applied (a mirror's: only what was shipped). */
    public ReplayAgent(PersistentRegion region, long heapBase, int pageSize, FrontendLog[] logs, ReplayGate gate) {
        this.region = region;
        this.heapBase = heapBase;
        this.logs = logs;
        this.gate = gate;
        this.cursors = new long[logs.length];
        for (int i = 0; i < logs.length; i++) {
            cursors[i] = logs[i].checkpoint().redoHead();
        }
    }

    /**
     * One pass over every frontend; returns how many batches were applied. Synchronized because
     * {@link #awaitReplayed()} may drain on the caller's thread while the agent's thread is starting.
     */
    public synchronized int doWork() {
        gate.beginPass();
        int work = 0;
        for (int i = 0; i < logs.length; i++) {
            work += replay(i);
        }
        return work;
    }

    private int replay(int i) {
        FrontendLog log = logs[i];
        if (log.fault() != null || log.quarantine() != null) {
            return 0;
        }
        int applied = 0;
        RingReader reader = log.redoReader();
        long limit = gate.limit(i);
        while (applied < 64 && cursors[i] < limit) {
            RingReader.Entry e = reader.read(cursors[i]);
            if (e.kind() == RingReader.Kind.PADDING) {
                // durable before the batch after it is applied, like the batch itself (see apply): a restart
                // replays from the checkpoint's head, and an unpersisted padding lost in a crash would stop it here
                persistUnlessDurable(log, reader.offsetOf(e.position()), LogRecordLayout.ALIGNMENT);
                cursors[i] = e.next();
                continue;
            }
            if (e.kind() != RingReader.Kind.VALID) {
                // after an unclean shutdown, a torn batch in the lap from where the valid records ended is what the
                // crash left (the recovering frontend writes there again), not damage
                RingDamage damage = log.leftByCrash(e.position()) ? null : RingDamage.ofUnwatermarked(reader, e);
                if (damage != null) {
                    log.quarantine(damage); // a damaged batch, not one still being written: stop this frontend
                }
                break;
            }
            if (!apply(log, e)) {
                break;
            }
            cursors[i] = e.next();
            applied++;
        }
        return applied;
    }

    private boolean apply(FrontendLog log, RingReader.Entry e) {
        byte[] batch = e.bytes();
        Checkpoint cp = log.checkpoint();
        long first = RedoBatchLayout.firstTxId(batch);
        long last = RedoBatchLayout.lastTxId(batch);
        long at = log.redoReader().offsetOf(e.position());
        long span = e.next() - e.position();
        if (last <= cp.appliedTxId()) {
            log.redoWrites().release(at, span);
            return true; // re-posted copy of an already applied batch: nothing to do
        }
        if (first != cp.appliedTxId() + 1 || last < first) {
            fault(log, "redo batch at position " + e.position() + " holds transactions " + first + ".." + last
                    + " but the next to apply is " + (cp.appliedTxId() + 1));
            return false;
        }
        if (e.next() > gate.limit(log.frontendId())) {
            return false; // not shipped whole yet (a mirror)
        }
        List<long[]> touched = new ArrayList<>();
        String[] violation = new String[1];
        try {
            RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
                @Override
                public void write(long heapOffset, byte[] b, int dataOffset, int length) {
                    touched.add(new long[] {heapOffset, length});
                }

                @Override
                public void commit(long txId) {
                    // transaction boundary: the whole batch is applied or none of it
                }
            });
        } catch (IllegalStateException malformed) {
            // a CRC-valid batch that does not parse is a writer bug: stop this frontend, not every frontend's pass
            violation[0] = "redo batch at position " + e.position() + " is malformed: " + malformed.getMessage();
        }
        if (violation[0] == null) {
            violation[0] = gate.admit(log.frontendId(), touched);
            if (ReplayGate.WAIT.equals(violation[0])) {
                return false; // retried on a later pass
            }
        }
        if (violation[0] != null) {
            fault(log, violation[0]);
            return false;
        }
        // The batch must be durable before any of it reaches the heap: the frontend's WRITE of it is persisted
        // only by its next FLUSH, and a crash after some heap lines were written back but before the checkpoint
        // must find the batch again and replay it (re-executing its semantic records would apply them twice).
        // If a FLUSH already persisted exactly these bytes (the NIC saw the WRITE and then the FLUSH), persisting
        // them again would only write the same lines back twice (issue 8 goal 7); otherwise (not flushed yet, a
        // mirror, bytes found after a restart) persist them here, and the FLUSH that follows skips them.
        persistUnlessDurable(log, at, span);
        // from here the heap may hold this batch's bytes before the checkpoint says so: a mirror's fuzzy image
        // copy must then wait for this batch's redo before it calls itself in sync (MirrorShipper#copy)
        log.heapStoring(last);
        RedoBatchLayout.forEachEntry(batch, new RedoBatchLayout.EntryVisitor() {
            @Override
            public void write(long heapOffset, byte[] b, int dataOffset, int length) {
                region.write(heapBase + heapOffset, b, dataOffset, length);
            }

            @Override
            public void commit(long txId) {
            }
        });
        persistTouched(touched);
        log.advance(last, e.next(), RedoBatchLayout.semanticEnd(batch));
        batchesApplied.incrementAndGet();
        return true;
    }

    /**
     * Makes a redo ring entry {@code [at, at + span)} durable before anything depends on it: nothing to do if a FLUSH
     * already persisted the frontend's WRITE of it; else persisted here (the whole aligned span, the unit the
     * frontend writes), and the NIC told so, so that the FLUSH following the WRITE does not persist it again. The
     * entry is then released: the replayer does not ask about it again.
     */
    private void persistUnlessDurable(FrontendLog log, long at, long span) {
        WriteDurability writes = log.redoWrites();
        if (!writes.isDurable(at, span)) {
            long upTo = writes.completed();
            region.persist(at, span);
            writes.persisted(at, span, upTo);
        }
        writes.release(at, span);
    }

    /**
     * Persists the touched ranges, widened to whole cache lines (the unit a write-back moves, and what is counted)
     * and merged where they share or abut a line, so each line is written back once. Widening to pages instead
     * would write back, and count, up to a page per small update. The merged ranges go to the region in one call
     * ({@link io.asymnvm.core.region.PersistentRegion#persistRanges}): on a file it is one msync, so one device
     * flush per batch, not one per range.
     */
    private void persistTouched(List<long[]> touched) {
        touched.sort((a, b) -> Long.compare(a[0], b[0]));
        long[] starts = new long[touched.size()];
        long[] ends = new long[touched.size()];
        int n = 0;
        long mask = -CACHE_LINE;
        for (long[] t : touched) {
            long s = (heapBase + t[0]) & mask;
            long en = (heapBase + t[0] + t[1] + CACHE_LINE - 1) & mask;
            if (n > 0 && s <= ends[n - 1]) {
                ends[n - 1] = Math.max(ends[n - 1], en);
            } else {
                starts[n] = s;
                ends[n] = en;
                n++;
            }
        }
        region.persistRanges(starts, ends, n);
    }

    private void fault(FrontendLog log, String reason) {
        log.fault(reason);
        LOG.error("replay stopped for frontend {}: {}", log.frontendId(), reason);
    }

    /** Wakes the agent (a redo ring was written). */
    public void signal() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Replays everything that is complete now, on the caller's thread if the agent is not running. */
    public void awaitReplayed() {
        if (thread == null || !running) {
            while (doWork() > 0) {
                // drain
            }
            return;
        }
        long target = idlePasses.get() + 2;
        signal();
        while (idlePasses.get() < target && running) {
            LockSupport.parkNanos(100_000);
        }
        Error f = failure;
        if (f != null) {
            throw new IllegalStateException("the replayer has stopped: " + f, f);
        }
    }

    /** Runs {@code action} while no redo batch is being applied (readers that need a whole-batch view). */
    public synchronized void betweenBatches(Runnable action) {
        action.run();
    }

    /** Replaces the gate (a mirror's promotion to backend), between batches. */
    public synchronized void gate(ReplayGate next) {
        this.gate = next;
    }

    /**
     * Sets frontend {@code frontendId}'s checkpoint and replay cursor (a mirror adopting the checkpoint its image
     * copy was taken at), between batches.
     */
    public synchronized void rebase(int frontendId, long appliedTxId, long redoHead, long semHead) {
        logs[frontendId].advance(appliedTxId, redoHead, semHead);
        cursors[frontendId] = redoHead;
    }

    public long batchesApplied() {
        return batchesApplied.get();
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        while (running) {
            int work;
            try {
                work = doWork();
            } catch (RuntimeException ex) {
                LOG.error("replayer pass failed", ex);
                work = 0;
            } catch (Error fatal) {
                // the media is gone (simulated power failure) or the JVM is failing: stop, and let waiters see it
                LOG.error("replayer stopped", fatal);
                failure = fatal;
                running = false;
                return;
            }
            if (work == 0) {
                idlePasses.incrementAndGet();
                LockSupport.parkNanos(this, IDLE_PARK_NANOS);
            }
        }
    }

    public void stop() {
        running = false;
        signal();
    }
}
