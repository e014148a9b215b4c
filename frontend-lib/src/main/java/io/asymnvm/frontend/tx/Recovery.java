package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.tx.TransactionEngine.RecoveryReport;
import io.asymnvm.recovery.semantic.SemanticLogReader;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Recovery, frontend side (DESIGN §4). Two kinds: {@link #recover()} re-executes, through the registered methods
 * and with their original ids, the semantic records a previous incarnation (or the frontend of a promoted
 * mirror's backend) left after the backend's last applied transaction; {@link #reconnect} re-attaches after a lost
 * connection and re-posts every retained record at its position before any new record or FLUSH. Every
 * operation that fails on the link goes through {@link #recoverOrThrow}, which decides between reconnecting,
 * failing over ({@link MirrorFailover}) and stopping for good (fenced, quarantined).
 *
 * <p>Threads: any; {@code recover()} is serialised on this object, reconnects hold {@code flushLock} then
 * {@code exec}.
 */
final class Recovery {
    private static final Logger LOG = LoggerFactory.getLogger(Recovery.class);

    private final TransactionEngine engine;

    Recovery(TransactionEngine engine) {
        this.engine = engine;
    }

    /** A control call outside any transaction (catalog), reconnecting like every other caller. */
    byte[] controlCall(byte[] request) {
        engine.checkUsable();
        while (true) {
            long generation = engine.link.generation();
            try {
                byte[] reply = engine.link.call(request);
                engine.controlRoundTrips.incrementAndGet();
                return reply;
            } catch (AsymNvmException e) {
                recoverOrThrow(e, generation);
            }
        }
    }

    /**
     * Frontend recovery (DESIGN §4): re-executes, in order and with their original transaction ids, the
     * semantic records this frontend's previous incarnation left after the backend's last applied transaction,
     * through the registered methods. Stops at the first torn record. Idempotent: a crash during recovery leaves
     * the records in the ring and the next recovery starts from whatever the backend applied meanwhile. Runs
     * automatically before the first new transaction; call it directly to recover eagerly.
     */
    public synchronized RecoveryReport recover() {
        AttachReply r = engine.pendingRecovery;
        if (r == null) {
            RecoveryReport last = engine.lastRecovery;
            return last != null ? last : RecoveryReport.NOTHING;
        }
        long start = System.nanoTime();
        List<SemanticLogReader.Record> records = SemanticLogReader.read(
                (offset, length) -> engine.link.read(RegionIds.semantic(engine.frontendId), offset,
                        length).await().bytes(),
                r.semCapacity(), r.semHead(), r.semValidTail());
        long first = 0;
        long last = 0;
        int replayed = 0;
        for (int i = 0; i < records.size(); i++) {
            SemanticLogReader.Record rec = records.get(i);
            if (rec.isPadding()) {
                long owner = i + 1 < records.size() ? records.get(i + 1).txId() : engine.nextTxId;
                engine.exec.lock();
                try {
                    long span = r.semCapacity() - Math.floorMod(rec.position(), r.semCapacity());
                    engine.semRing.adopt(engine.semWriter, rec.position(), rec.raw(), owner, rec.position() + span);
                } finally {
                    engine.exec.unlock();
                }
                continue;
            }
            MethodRegistry.Entry entry = engine.registry.lookup(rec.methodHash());
            if (entry == null) {
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "cannot recover frontend " + engine.frontendId
                        + ": semantic record of tx " + rec.txId() + " names method hash 0x"
                        + Long.toHexString(rec.methodHash()) + ", which is not registered (registered: "
                        + engine.registry.signatures() + "); register every @PersistentTransaction interface with "
                        + "transactional(...) before the first call, with unchanged signatures");
            }
            try {
                // arguments are decoded from the record, afresh for every attempt
                engine.executor.run(entry, null, rec);
            } catch (AsymNvmException e) {
                if (e.errorCode() == ErrorCode.RECOVERY_REQUIRED || e.errorCode() == ErrorCode.CLASS_NOT_REGISTERED) {
                    throw e;
                }
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "re-execution of tx " + rec.txId() + " ("
                        + entry.signature() + ") failed: " + e.getMessage(), e);
            } catch (Throwable t) {
                throw new AsymNvmException(ErrorCode.RECOVERY_REQUIRED, "re-execution of tx " + rec.txId() + " ("
                        + entry.signature() + ") failed; the method is not deterministic or its code changed: "
                        + t, t);
            }
            if (first == 0) {
                first = rec.txId();
            }
            last = rec.txId();
            replayed++;
        }
        engine.commit.awaitDurable(engine.posted.txId(), engine.controlRoundTrips);
        engine.pendingRecovery = null;
        engine.mirrorFailover.declareMirrors(); // the re-executed records are durable on every mirror now
        RecoveryReport report = new RecoveryReport(replayed, first, last,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        engine.lastRecovery = report;
        LOG.info("frontend {} recovered: re-executed {} transactions ({}..{}) in {} ms", engine.frontendId, replayed,
                first, last, report.millis());
        return report;
    }

    void recoverOrThrow(AsymNvmException e, long failedGeneration) {
        if (engine.successor != null) {
            throw new Superseded(engine.successor);
        }
        if (e.errorCode() == ErrorCode.STALE_EPOCH || e.errorCode() == ErrorCode.IDENTITY_MISMATCH) {
            engine.fatal = e; // a newer incarnation attached: never write, flush or reconnect again
            throw e;
        }
        if (e.errorCode() == ErrorCode.RING_CORRUPT) {
            // quarantined: the backend acknowledges nothing more from this incarnation, so every later FLUSH
            // would be refused the same way; stop (the agent too) instead of retrying, and keep the ring's words
            LOG.error("frontend {} stopped: {}", engine.frontendId, e.getMessage());
            engine.fatal = e;
            throw e;
        }
        if (e.errorCode() != ErrorCode.CONNECTION_LOST && e.errorCode() != ErrorCode.TIMEOUT) {
            throw e;
        }
        reconnect(failedGeneration);
    }

    /**
     * Reconnects after a lost connection (backend restarted or network failure) and writes every record the
     * backend has not applied again at its position, before any new record or FLUSH can be posted.
     */
    void reconnect(long failedGeneration) {
        long start = System.nanoTime();
        synchronized (engine.flushLock) {
            engine.exec.lock();
            try {
                if (engine.successor != null) {
                    throw new Superseded(engine.successor);
                }
                AsymNvmException f = engine.fatal;
                if (f != null) {
                    throw f; // fenced or abandoned: re-attaching would fence the incarnation that replaced us
                }
                AttachReply r;
                try {
                    r = engine.link.reconnect(failedGeneration);
                } catch (AsymNvmException e) {
                    if (engine.mirrors != null && e.errorCode() == ErrorCode.CONNECTION_LOST && engine.running) {
                        engine.mirrorFailover.failOver(e, start); // returns once a promoted mirror serves this frontend
                        return;
                    }
                    engine.fatal = e;
                    throw e;
                }
                if (r == null) {
                    return;
                }
                engine.reconnects.incrementAndGet();
                engine.inflight = null;
                engine.cache.invalidateClean(); // the backend restarted or the session changed: refetch what is clean
                engine.shipper.learnApplied(r.appliedTxId(), r.semHead(), r.redoHead());
                int sem = engine.semRing.repost(engine.link);
                int red = engine.redoRing.repost(engine.link);
                LOG.info("frontend {} re-posted {} semantic and {} redo records after reconnect",
                        engine.frontendId, sem,
                        red);
            } finally {
                engine.exec.unlock();
            }
            // a new backend attach epoch: the mirrors count this frontend under it again
            engine.mirrorFailover.declareMirrors();
        }
    }
}
