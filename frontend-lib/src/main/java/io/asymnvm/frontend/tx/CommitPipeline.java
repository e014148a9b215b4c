package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.link.MirrorLinks;
import io.asymnvm.frontend.log.RedoBuffer;
import io.asymnvm.frontend.tx.TransactionEngine.Mark;
import io.asymnvm.recovery.semantic.SemanticLogReader;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The commit pipeline (DESIGN §2 steps 2-3). Under {@code exec}: the next transaction id, the semantic record
 * posted as one WRITE at the tail of the semantic ring (ids and ring order are the serialization order), the
 * attempt's pages installed in the cache as dirty (one change of the cache sequence), its writes appended to the
 * redo buffer; the lock is then released (early lock release). Outside the lock a SYNC caller waits for a FLUSH
 * posted after its record, shared by every record posted before it (group commit); with SYNC mirrors that FLUSH
 * goes to all of them in parallel ({@link MirrorFailover#awaitMirrors}). Recovery adopts records already in the
 * ring instead of posting them ({@link #adoptAndApply}).
 *
 * <p>Threads: committers and the agent; group-commit state under {@code flushLock}, the durable watermark under
 * its own leaf lock.
 */
final class CommitPipeline {

    private final TransactionEngine engine;

    CommitPipeline(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * Step 2 under the lock: id, semantic record, dirty pages, redo. Returns -1 if a ring has no room.
     * {@code record} is the call's semantic record image with its arguments in place
     * ({@link Executor#encodeArguments}); its header is filled here, once, as it is posted.
     */
    long logAndApply(MethodRegistry.Entry entry, byte[] record, TransactionContext tx) {
        int redoBytes = RedoBuffer.sizeOf(tx.writes());
        if (redoBytes > engine.redo.maxTransactionBytes()) {
            throw new IllegalStateException("transaction " + entry.signature() + " writes " + redoBytes
                    + " bytes of redo, limit " + engine.redo.maxTransactionBytes());
        }
        int semLength = record.length;
        if (!engine.semRing.fits(semLength)) {
            return -1;
        }
        if (!engine.redo.hasRoomFor(redoBytes) && !engine.shipper.shipRedo()) {
            return -1;
        }
        long txId = engine.nextTxId++;
        long semEnd = engine.semRing.append(engine.semWriter, semLength, pos -> {
            SemanticRecordLayout.finish(record, pos, txId, entry.hash());
            return record;
        }, txId);
        return install(txId, tx, semEnd);
    }

    /** Recovery's step 2: the semantic record is already in the ring; keep it and apply the write set. */
    long adoptAndApply(SemanticLogReader.Record record, TransactionContext tx) {
        int redoBytes = RedoBuffer.sizeOf(tx.writes());
        if (!engine.redo.hasRoomFor(redoBytes) && !engine.shipper.shipRedo()) {
            return -1;
        }
        long txId = record.txId();
        if (txId != engine.nextTxId) {
            throw new AsymNvmException(ErrorCode.CORRUPT_RECORD, "semantic record at " + record.position()
                    + " holds tx " + txId + ", expected " + engine.nextTxId);
        }
        engine.nextTxId++;
        engine.semRing.adopt(engine.semWriter, record.position(), record.raw(), txId, record.position()
                + record.raw().length);
        long semEnd = engine.semRing.position();
        return install(txId, tx, semEnd);
    }

    /** After the semantic record: the attempt's pages become dirty, its writes go to the redo buffer. */
    private long install(long txId, TransactionContext tx, long semEnd) {
        engine.cache.putDirty(tx.privatePages(), txId); // one change of the cache sequence: readers see all or re-run
        engine.redo.append(txId, tx.writes(), semEnd);
        engine.posted = new Mark(txId, semEnd);
        if (engine.redo.txCount() >= engine.options.redoBatchTransactions()
                || engine.redo.bytes() >= engine.redo.maxBatchBytes() / 2) {
            engine.shipper.shipRedo();
        }
        return txId;
    }

    /** Waits until transaction {@code txId} is durable: the commit point (DESIGN §2 step 3). */
    void awaitDurable(long txId) {
        awaitDurable(txId, engine.commitRoundTrips);
    }

    /**
     * Group commit. A committer whose record the FLUSH in flight covers waits for that FLUSH. With
     * {@code FrontendOptions.combineFlushes}, one whose record came after it lets that FLUSH land first, as a gate
     * (not awaited as its own round trip, so each commit still waits for at most one), and then, back in the loop,
     * the first of those waiters posts one FLUSH covering every record posted meanwhile, which the others share:
     * with N committers about one FLUSH per round-trip time instead of one per commit. Without it (the default) it
     * posts its own FLUSH at once (pipelined FLUSHes, each a backend persist), which measured faster on the 2-core
     * machine. A lone committer never finds a FLUSH in flight that does not cover it: same path either way.
     */
    void awaitDurable(long txId, AtomicLong roundTrips) {
        while (engine.durableTxId < txId) {
            engine.checkUsable();
            Completion c;
            long covers;
            long generation;
            MirrorLinks.Flush mirrorFlush = null;
            Completion gate = null;
            synchronized (engine.flushLock) {
                if (engine.durableTxId >= txId) {
                    return;
                }
                boolean current = engine.inflight != null && engine.inflightGeneration == engine.link.generation();
                if (current && engine.inflightCovers < txId && engine.combineFlushes && !engine.inflight.isDone()) {
                    gate = engine.inflight; // not covered but in flight: let it land, then share or post the next one
                    c = null;
                    covers = 0;
                    generation = 0;
                } else if (current && engine.inflightCovers >= txId) {
                    c = engine.inflight;
                    covers = engine.inflightCovers;
                    generation = engine.inflightGeneration;
                    mirrorFlush = engine.inflightMirrors;
                } else {
                    Mark m = engine.posted;
                    generation = engine.link.generation();
                    c = engine.link.flush(m.semEnd());
                    if (engine.mirrors != null) {
                        mirrorFlush = engine.mirrors.flush(m.semEnd()); // in parallel: still one round-trip time
                        engine.inflightMirrors = mirrorFlush;
                    }
                    engine.inflight = c;
                    engine.inflightCovers = m.txId();
                    engine.inflightGeneration = generation;
                    covers = m.txId();
                }
            }
            if (gate != null) {
                gate.awaitSettled(engine.waitPolicy); // a gate, not a round trip of ours: its owner handles its result
                continue;
            }
            try {
                c.await(engine.waitPolicy);
            } catch (AsymNvmException e) {
                try {
                    engine.recovery.recoverOrThrow(e, generation);
                } catch (Superseded s) {
                    if (engine.durableTxId >= txId) {
                        return; // a failover made every posted record durable on the promoted mirror
                    }
                    throw s;
                }
                continue;
            }
            if (mirrorFlush != null) {
                boolean all;
                try {
                    // a mirror's failure is the mirror's, never the backend's
                    all = engine.mirrorFailover.awaitMirrors(mirrorFlush);
                } catch (Superseded s) {
                    if (engine.durableTxId >= txId) {
                        return;
                    }
                    throw s;
                }
                if (!all) {
                    continue; // a mirror was reconnected and its ring re-posted: FLUSH again
                }
            }
            roundTrips.incrementAndGet();
            advanceDurable(covers);
        }
    }

    /**
     * Raises the durable watermark. Its own leaf lock: callers may hold {@code exec} (learnApplied), and
     * {@link #recover()} holds this engine's monitor while it takes {@code exec}, so the monitor would deadlock.
     */
    void advanceDurable(long covers) {
        synchronized (engine.durableLock) {
            if (covers > engine.durableTxId) {
                engine.durableTxId = covers;
            }
        }
    }
}
