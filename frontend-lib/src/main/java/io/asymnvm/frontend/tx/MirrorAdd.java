package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ControlMessageLayout.AttachReply;
import io.asymnvm.frontend.link.BackendLink;
import io.asymnvm.frontend.link.MirrorLinks;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Adding a SYNC mirror to a running frontend (issue 9: a mirror that joins while frontends run).
 *
 * <p>Design. The mirror must end up holding, for this frontend, every acknowledged transaction: applied in its
 * image, or as a semantic record in its ring after its semantic head. Records up to the engine's released
 * transaction R are applied on the backend and on every mirror already in the set; the backend ships their redo,
 * so the new mirror applies them once its image copy caught up. Every record after R is retained in DRAM. So:
 * <ol>
 *   <li>attach to the mirror (no lock held: a round trip), checked like a mirror given at open (same image and
 *       geometry, answers as a mirror);
 *   <li>under {@code flushLock} and the execution lock: re-post every retained record at its ring position, add the
 *       mirror to the set the semantic writer posts to, and forget the FLUSH in flight. No transaction can be
 *       posted between the re-post and the first dual-post (both need the execution lock), and no FLUSH can be
 *       posted before the mirror is in the set (FLUSHes need {@code flushLock}): every later commit waits for the
 *       mirror's FLUSH too;
 *   <li>still under {@code flushLock}: tell the mirror where the re-posted records start (MIRROR_POSTING with a
 *       semantic start: its FLUSH check begins there, the released records before it reach it as redo), FLUSH it
 *       up to everything posted and wait, then declare it SYNC
 *       (MIRROR_POSTING with this frontend's backend attach epoch and R). The mirror is in sync only once every
 *       frontend attached to the backend declared it and it applied each one's R (MirrorReplayGate).
 * </ol>
 * Ring space is released from then on at the minimum over the backend and every mirror, the new one included, so
 * records the new mirror has not applied stay retained and unoverwritten.
 */
final class MirrorAdd {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorAdd.class);

    private MirrorAdd() {
    }

    static void add(TransactionEngine engine, BackendLink mirrorLink) {
        View e = new View(engine);
        if (mirrorLink.frontendId() != e.frontendId()) {
            throw new IllegalArgumentException("mirror link of frontend " + mirrorLink.frontendId()
                    + " given to frontend " + e.frontendId());
        }
        String backend = e.backendEndpoint();
        if (backend.equals(mirrorLink.endpoint()) || backend.endsWith(" " + mirrorLink.endpoint())) {
            // attaching there as this frontend would fence the frontend's own session on its backend
            throw new IllegalArgumentException("mirror " + mirrorLink.endpoint() + " is frontend " + e.frontendId()
                    + "'s backend (" + backend + "), not a mirror of it");
        }
        if (engine.mirrorEndpoints().contains(mirrorLink.endpoint())) { // before attaching: it would fence ours
            throw new IllegalArgumentException("mirror " + mirrorLink.endpoint() + " is already a SYNC mirror of "
                    + "frontend " + e.frontendId() + " (in sync: " + engine.mirrorEndpoints() + ")");
        }
        AttachReply reply = mirrorLink.open();
        long from = e.firstRetained();
        if (from - reply.semHead() > e.semCapacity()) {
            // The mirror's FLUSH check starts at most one ring past its own checkpoint: before its image copy
            // arrived (a mirror joins the configuration first) it holds no checkpoint of this frontend, and the
            // re-posted records could not be admitted. Refused before it joins the set; the caller tries again.
            mirrorLink.close();
            throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, "mirror " + mirrorLink.endpoint()
                    + " has no image copy of frontend " + e.frontendId() + "'s log yet: its checkpoint is at "
                    + "semantic position " + reply.semHead() + ", the retained records start at " + from
                    + ", more than the ring's " + e.semCapacity() + " bytes later; add it once its copy arrived");
        }
        boolean declaring = false;
        synchronized (e.flushLock()) { // an undo runs under it too: no commit FLUSHes the mirror before it is out
            try {
                e.checkUsable();
                MirrorLinks.Mirror m;
                e.exec().lock();
                try {
                    m = e.addAndRepost(mirrorLink, reply);
                } finally {
                    e.exec().unlock();
                }
                MirrorLinks.startAt(m, e.backendAttachEpoch(), e.repostStart());
                mirrorLink.flush(e.semEnd()).await();
                declaring = true;
                if (!MirrorLinks.declare(m, e.backendAttachEpoch(), e.releasedTxId())) {
                    LOG.warn("frontend {}: mirror {} did not take the declaration now; its reconnect declares again",
                            e.frontendId(), mirrorLink.endpoint());
                }
                e.exec().lock();
                try {
                    e.releaseAtMin();
                } finally {
                    e.exec().unlock();
                }
            } catch (RuntimeException x) {
                if (!declaring) {
                    undo(e, mirrorLink, x);
                }
                throw x;
            }
        }
        LOG.info("frontend {}: SYNC mirror {} added at run time", e.frontendId(), mirrorLink.endpoint());
    }

    /**
     * An add that failed before the mirror was declared SYNC (its re-post, start or FLUSH failed, or it was refused
     * before it joined): takes it out of the set again if it joined, so no commit waits for it and no ring space is
     * held for it, and closes its link; the caller may add it again. Safe because an undeclared mirror does not
     * count this frontend: it stays catching up (not promotable) until a later add declares it. A failure after the
     * declaration was sent is not undone: the mirror may have taken it, and must then keep receiving every record;
     * it stays in the set and its reconnect declares again.
     */
    private static void undo(View e, BackendLink mirrorLink, RuntimeException cause) {
        if (e.removeIfJoined(mirrorLink)) {
            LOG.warn("frontend {}: adding SYNC mirror {} failed after it joined the set ({}): taken out again, "
                    + "commits no longer wait for it", e.frontendId(), mirrorLink.endpoint(), cause.getMessage());
        }
        mirrorLink.close();
    }

    /**
     * After a mirror's reconnect re-posted the retained records (under {@code flushLock}): FLUSH them and declare
     * the mirror SYNC again. A failure is left to the next commit, which reconnects the mirror again.
     */
    static void flushAndDeclare(MirrorLinks.Mirror m, long repostedFrom, long semEnd, long backendAttachEpoch,
                                long sinceTxId) {
        MirrorLinks.startAt(m, backendAttachEpoch, repostedFrom);
        try {
            m.link().flush(semEnd).await();
        } catch (RuntimeException e) {
            return;
        }
        MirrorLinks.declare(m, backendAttachEpoch, sinceTxId);
    }

    /** This class's view of an engine's locks, rings and mirror set. */
    static final class View {
        private final TransactionEngine engine;
        /** Where the records {@link #addAndRepost} re-posted start in the ring. */
        private long repostStart;

        private View(TransactionEngine engine) {
            this.engine = engine;
        }

        long repostStart() {
            return repostStart;
        }

        Object flushLock() {
            return engine.flushLock;
        }

        ReentrantLock exec() {
            return engine.exec;
        }

        void checkUsable() {
            engine.checkUsable();
        }

        /** Under both locks: adds {@code m} to the mirror set (creating it) and re-posts the retained records. */
        MirrorLinks.Mirror addAndRepost(BackendLink l, AttachReply reply) {
            MirrorLinks ms = engine.mirrors;
            if (ms == null) {
                ms = new MirrorLinks(List.of(), false);
            }
            MirrorLinks.Mirror m = ms.add(l, reply, engine.backendAttach, engine.link.endpoint());
            if (engine.mirrors == null) {
                engine.mirrors = ms;
                engine.semWriter = ms.semanticWriter(engine.link);
            }
            repostStart = engine.semRing.firstRetained();
            int n = engine.semRing.repost(l);
            engine.inflight = null; // FLUSHes posted before the add do not cover the mirror
            engine.inflightMirrors = null;
            LOG.info("frontend {} added SYNC mirror {} and re-posted {} semantic records", engine.frontendId,
                    l.endpoint(), n);
            return m;
        }

        /**
         * Takes the mirror of {@code l} out of the set if {@link #addAndRepost} put it there (possibly before its
         * re-post failed), and releases ring space at the minimum over the others; returns whether it was there.
         */
        boolean removeIfJoined(BackendLink l) {
            MirrorLinks ms = engine.mirrors;
            if (ms == null || !ms.contains(l)) {
                return false;
            }
            engine.mirrorFailover.remove(l.endpoint()); // never declared: nothing to tell the backend
            return true;
        }

        long semEnd() {
            return engine.posted.semEnd();
        }

        /** Where the oldest retained semantic record starts (a re-post starts there). */
        long firstRetained() {
            return engine.semRing.firstRetained();
        }

        /** The semantic ring's capacity in bytes. */
        long semCapacity() {
            return engine.semRing.capacity();
        }

        long releasedTxId() {
            return engine.releasedTxId;
        }

        /** The posting epoch declarations are made under (the backend attach epoch and posting generation). */
        long backendAttachEpoch() {
            return engine.postingEpoch();
        }

        int frontendId() {
            return engine.frontendId;
        }

        String backendEndpoint() {
            return engine.link.endpoint();
        }

        void releaseAtMin() {
            engine.mirrorFailover.releaseAtMin();
        }
    }
}
