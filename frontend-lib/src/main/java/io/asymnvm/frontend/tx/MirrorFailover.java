package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.layout.ControlBlockLayout;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.PostingEpoch;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.frontend.link.MirrorLinks;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * SYNC mirrors and failover, engine side (issue 9; {@link MirrorLinks} holds the links, {@link Failover} what a
 * frontend keeps across failovers). Waits for the mirrors' FLUSHes, learns their checkpoints and releases ring
 * space at the minimum, reconnects a mirror and re-posts its ring, and when the backend stays unreachable finds a
 * promoted mirror and resumes this frontend on it through a successor engine. Without mirrors nothing here runs.
 *
 * <p>Threads: committers and the agent; reconnects and the failover hold {@code flushLock} then {@code exec}.
 */
final class MirrorFailover {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorFailover.class);

    private final TransactionEngine engine;

    MirrorFailover(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * Waits for the mirrors' FLUSHes of one durability wait. Returns false if a mirror had to be reconnected
     * (its ring was re-posted; the caller FLUSHes again); a dropped mirror is not waited for.
     */
    boolean awaitMirrors(MirrorLinks.Flush flush) {
        MirrorLinks.Mirror[] ms = flush.mirrors();
        for (int i = 0; i < ms.length; i++) {
            if (ms[i].dropped()) {
                continue;
            }
            try {
                Completion c = flush.completions()[i];
                if (c == null) {
                    throw new AsymNvmException(ErrorCode.CONNECTION_LOST, "not connected");
                }
                c.await(engine.waitPolicy);
            } catch (AsymNvmException e) {
                if (ms[i].dropped()) {
                    continue;
                }
                recoverMirrorOrThrow(ms[i], e, flush.generations()[i]);
                return false;
            }
        }
        return true;
    }

    /**
     * At the engine's open: attaches the SYNC {@code mirrors} given at open (null or empty: none) after the
     * backend's {@code reply}, checked against it, and points the semantic writer at the backend and every mirror;
     * if a mirror cannot be attached the backend's link is closed and the failure rethrown.
     */
    void open(MirrorLinks mirrors, AttachReply reply) {
        if (mirrors != null && !mirrors.isEmpty()) {
            try {
                mirrors.open(reply, engine.link.endpoint());
            } catch (RuntimeException e) {
                engine.link.close();
                throw e;
            }
            engine.mirrors = mirrors;
            engine.semWriter = mirrors.semanticWriter(engine.link);
        } else {
            engine.mirrors = null;
            engine.semWriter = engine.link;
        }
    }

    /** Declares every mirror SYNC under the backend attach epoch (MIRROR_POSTING); see {@link MirrorAdd}. */
    void declareMirrors() {
        MirrorLinks ms = engine.mirrors;
        if (ms != null) {
            for (MirrorLinks.Mirror m : ms.active()) {
                if (m.posted()) { // an ASYNC mirror is watched, never posted to: nothing to declare
                    MirrorLinks.declare(m, engine.postingEpoch(), engine.releasedTxId);
                }
            }
        }
    }


    /** Reads every in-sync mirror's published checkpoint and releases ring space at the minimum. */
    void pollMirrors(boolean background) {
        for (MirrorLinks.Mirror m : engine.mirrors.active()) {
            long generation = m.link().generation();
            ControlBlockLayout.Checkpoint cp;
            try {
                cp = m.readCheckpoint();
            } catch (AsymNvmException e) {
                if (!background && !m.dropped()) {
                    recoverMirrorOrThrow(m, e, generation); // the agent leaves reconnecting to the commits
                }
                continue;
            }
            (background ? engine.backgroundRoundTrips : engine.controlRoundTrips).incrementAndGet();
            engine.exec.lock();
            try {
                m.learn(cp.appliedTxId(), cp.semHead(), cp.redoHead());
                releaseAtMin();
            } finally {
                engine.exec.unlock();
            }
        }
    }

    /**
     * A SYNC mirror's operation failed: reconnect it (commits wait, holding the locks, like for the backend) and
     * re-post every retained semantic record to the new session. Unreachable past the mirror reconnect timeout:
     * {@code CONNECTION_LOST} naming it, to the committing caller (not fatal: the next commit tries again, and a
     * dropped mirror is no longer waited for). A mirror that answers as a newly promoted backend is failed over to.
     */
    void recoverMirrorOrThrow(MirrorLinks.Mirror m, AsymNvmException e, long failedGeneration) {
        if (e.errorCode() != ErrorCode.CONNECTION_LOST && e.errorCode() != ErrorCode.TIMEOUT) {
            throw new AsymNvmException(e.errorCode(), "SYNC mirror " + m.endpoint() + " of frontend "
                    + engine.frontendId
                    + ": " + e.detail(), e);
        }
        long start = System.nanoTime();
        long repostedFrom;
        // flushLock only while reconnecting: transactions keep executing and posting (their records are retained
        // and re-posted below), but no FLUSH can stamp the new session before the re-post
        synchronized (engine.flushLock) {
            engine.checkUsable();
            if (m.dropped()) {
                return;
            }
            AttachReply r;
            try {
                r = m.link().reconnect(failedGeneration);
            } catch (AsymNvmException x) {
                if (m.dropped()) {
                    return;
                }
                throw new AsymNvmException(x.errorCode(), "SYNC mirror " + m.endpoint() + " of frontend "
                        + engine.frontendId + ": " + x.detail() + "; commits are not acknowledged without it until it "
                        + "is back or dropped (AsymNvm.dropMirror)", x);
            }
            if (r == null) {
                return;
            }
            engine.exec.lock();
            try {
                if (engine.mirrors.promoted(r, engine.failover.fence())) {
                    promoteTo(m, r, start, System.nanoTime()); // the mirror serves now: the backend was replaced
                    return;
                }
                engine.inflight = null;
                engine.inflightMirrors = null;
                m.learn(r.appliedTxId(), r.semHead(), r.redoHead());
                repostedFrom = engine.semRing.firstRetained();
                int n = engine.semRing.repost(m.link());
                releaseAtMin();
                LOG.info("frontend {} reconnected SYNC mirror {} and re-posted {} semantic records", engine.frontendId,
                        m.endpoint(), n);
            } finally {
                engine.exec.unlock();
            }
            MirrorAdd.flushAndDeclare(m, repostedFrom, engine.posted.semEnd(), engine.postingEpoch(),
                    engine.releasedTxId);
        }
    }

    /**
     * Under {@code flushLock} and {@code exec}: the backend stayed unreachable. Re-attaches the mirrors until one
     * answers as the serving backend with a newer epoch (see {@link Failover}), then resumes on it; throws
     * {@code CONNECTION_LOST} (fatal) if none is promoted within the failover timeout.
     */
    void failOver(AsymNvmException cause, long start) {
        long detected = System.nanoTime();
        long deadline = detected + TimeUnit.MILLISECONDS.toNanos(engine.options.failoverTimeoutMillis());
        long backoff = TimeUnit.MILLISECONDS.toNanos(20);
        LOG.warn("frontend {}: {}; looking for a promoted mirror among {}", engine.frontendId, cause.getMessage(),
                engine.mirrors.endpoints());
        while (true) {
            for (MirrorLinks.Mirror m : engine.mirrors.active()) {
                AttachReply r;
                try {
                    r = m.link().reconnect(m.link().generation()); // a fresh attach tells its role and epoch
                } catch (AsymNvmException e) {
                    LOG.info("frontend {}: mirror {} not available for failover: {}", engine.frontendId, m.endpoint(),
                            e.getMessage());
                    continue;
                }
                if (r == null) {
                    continue;
                }
                if (engine.mirrors.promoted(r, engine.failover.fence())) {
                    promoteTo(m, r, start, detected);
                    return;
                }
                m.learn(r.appliedTxId(), r.semHead(), r.redoHead());
                engine.semRing.repost(m.link()); // a new session on a mirror that stays one: it holds our records again
            }
            if (System.nanoTime() - deadline > 0) {
                AsymNvmException e = new AsymNvmException(ErrorCode.CONNECTION_LOST, cause.detail()
                        + ", and no SYNC mirror of " + engine.mirrors.endpoints() + " answered as a backend newer than "
                        + "epoch " + engine.failover.fence().highest() + " within "
                                + engine.options.failoverTimeoutMillis()
                        + " ms", cause);
                engine.fatal = e;
                throw e;
            }
            LockSupport.parkNanos(backoff);
            backoff = Math.min(backoff * 2, TimeUnit.MILLISECONDS.toNanos(200));
        }
    }

    /**
     * Under {@code flushLock} and {@code exec}: resumes this frontend on the promoted mirror {@code m}. Every
     * retained semantic record is written again at its position there and FLUSHed (so every record this frontend
     * posted is durable on the new backend, and blocked commits return); then a new engine attaches afresh, as a
     * restarted frontend would, and re-executes what the new backend has not applied. This engine's cache, redo
     * buffer and retained redo are dropped with it (the new backend has only the redo the old one shipped).
     */
    void promoteTo(MirrorLinks.Mirror m, AttachReply promoted, long start, long detected) {
        LOG.warn("frontend {}: mirror {} was promoted (epoch {}, applied tx {}); resuming on it", engine.frontendId,
                m.endpoint(), promoted.backendEpoch(), promoted.appliedTxId());
        long deadline = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(Math.max(engine.options.failoverTimeoutMillis(),
                1_000));
        engine.semRing.repost(m.link());
        m.link().flush(engine.posted.semEnd()).await();
        engine.commit.advanceDurable(engine.posted.txId());
        m.link().close();
        MirrorLinks rest = engine.mirrors.without(m);
        TransactionEngine next = null;
        AsymNvmException last = null;
        while (next == null) {
            try {
                next = new TransactionEngine(m.link().asBackend(engine.options.reconnectTimeoutMillis()),
                        rest.isEmpty() ? null : rest, engine.options, engine.registry, engine.failover);
            } catch (AsymNvmException e) {
                boolean transientFailure = e.errorCode() == ErrorCode.CONNECTION_LOST
                        || e.errorCode() == ErrorCode.TIMEOUT || e.errorCode() == ErrorCode.LIMIT_EXCEEDED;
                if (!transientFailure || System.nanoTime() - deadline > 0) {
                    engine.fatal = e;
                    throw e;
                }
                last = e;
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
        }
        if (last != null) {
            LOG.info("frontend {}: attach to the promoted mirror retried after {}", engine.frontendId,
                    last.getMessage());
        }
        engine.successor = next;
        engine.running = false;
        LockSupport.unpark(engine.agent);
        engine.link.close();
        try {
            next.recover(); // eagerly: the re-execution of what the new backend has not applied is part of resuming
        } catch (RuntimeException e) {
            LOG.error("frontend {}: recovery on the promoted mirror failed, retried at the next call: {}",
                    engine.frontendId, e.getMessage());
        }
        long now = System.nanoTime();
        engine.failover.record(detected - start, now - detected);
        LOG.warn("frontend {} failed over to {} (epoch {}): detection {} ms, resume {} ms", engine.frontendId,
                m.endpoint(), promoted.backendEpoch(), TimeUnit.NANOSECONDS.toMillis(detected - start),
                TimeUnit.NANOSECONDS.toMillis(now - detected));
    }

    /**
     * Under the exec lock, with mirrors: releases ring space at the oldest checkpoint over the backend and every
     * in-sync mirror (what a mirror has not applied stays retained and unoverwritten: a promoted mirror
     * re-executes it), and takes what all of them applied as durable.
     */
    void releaseAtMin() {
        long min = engine.mirrors.minApplied(engine.appliedTxId);
        if (min > engine.releasedTxId) {
            engine.releasedTxId = min;
        }
        engine.semRing.release(engine.releasedTxId, engine.mirrors.minSemHead(engine.backendSemHead));
        engine.redoRing.release(engine.releasedTxId, engine.mirrors.minRedoHead(engine.backendRedoHead));
        if (engine.releasedTxId > engine.durableTxId) {
            engine.commit.advanceDurable(engine.releasedTxId);
        }
    }

    /**
     * Removes the SYNC mirror {@code endpoint} from the in-sync set (see {@link TransactionEngine#dropMirror}). The
     * mirror may hold this frontend's declaration (MIRROR_POSTING), which made it count this frontend as posting
     * there: once dropped, commits are acknowledged without it, so it must not stay (or turn) in sync on that
     * declaration, or promoting it after the loss of the backend loses them. Its link may be broken, so the backend
     * is told instead, before the mirror leaves the set (commits wait for it until then): the frontend re-declares
     * every mirror it keeps under a raised posting generation ({@link PostingEpoch}), then raises it on the backend
     * (POSTING_GENERATION), which replies once every mirror it ships to was told; a mirror whose declaration the
     * raised generation voids turns catching up. If the backend cannot be told, the drop fails ({@code
     * CONNECTION_LOST}, {@code TIMEOUT}) and the mirror stays in the set.
     */
    void drop(String endpoint) {
        MirrorLinks.Mirror dropped = engine.mirrors.find(endpoint);
        if (dropped.posted()) { // an ASYNC mirror is never declared
            synchronized (this) {
                dropped.beginDrop(true); // before the raise: a reconnect of it must not declare it under the new one
                boolean told = false;
                try {
                    raisePostingGeneration(dropped);
                    told = true;
                } finally {
                    if (!told) {
                        dropped.beginDrop(false); // it stays in the set and is posted to: a declaration is true
                    }
                }
            }
        }
        remove(endpoint);
    }

    /** See {@link #drop}: re-declares the mirrors kept under a raised posting generation, then tells the backend. */
    private void raisePostingGeneration(MirrorLinks.Mirror dropped) {
        long attach = engine.link.attachEpoch();
        long raised = engine.raisedPostingEpoch;
        long generation = (raised != 0 && PostingEpoch.attachEpoch(raised) == attach
                ? PostingEpoch.generation(raised) : 0) + 1;
        long next = PostingEpoch.pack(attach, generation);
        engine.raisedPostingEpoch = next; // reconnects and adds from now on declare under it
        for (MirrorLinks.Mirror m : engine.mirrors.active()) {
            if (m != dropped && m.posted()) {
                MirrorLinks.declare(m, next, engine.releasedTxId); // a failure: its reconnect declares again
            }
        }
        engine.link.call(ControlMessageLayout.KIND_POSTING_GENERATION, next);
    }

    /** Takes the SYNC mirror {@code endpoint} out of the set without telling anyone (it was never declared). */
    void remove(String endpoint) {
        MirrorLinks.Mirror m = engine.mirrors.drop(endpoint);
        engine.exec.lock();
        try {
            releaseAtMin();
        } finally {
            engine.exec.unlock();
        }
        m.link().close();
        LOG.warn("frontend {} dropped SYNC mirror {}; in sync now: {}", engine.frontendId, endpoint,
                engine.mirrors.endpoints());
    }
}
