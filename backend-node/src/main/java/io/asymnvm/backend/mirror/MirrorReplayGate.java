package io.asymnvm.backend.mirror;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.replay.ReplayGate;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.layout.PostingEpoch;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/**
 * A mirror's replay rule. It applies a frontend's redo only up to the position its backend shipped and flushed
 * (the limit of the last REPLICATE), never past it: bytes beyond are not known to be the backend's history.
 *
 * <p>It does not check writes against the slab table the way a backend does; it keeps its table in step with the
 * backend's. The backend grants and takes back slabs outside the redo stream (the grant's cleaning is a direct PM
 * write), so the mirror repeats them itself, in the backend's order: the shipper sends every grant and return as an
 * event; a return is applied once its old owner's replay reached the event's barrier (that owner's redo head when
 * the backend took the slab back: its writes to the slab all lie before it), and no later event before it; a
 * grant cleans and initialises the slab with {@link SlabTable#assign} (the grant's own code). A batch writing to a
 * slab whose grant to its frontend is still queued waits. So the mirror's heap goes through the backend's states in
 * the same order for every slab, whatever the order in which the replayer visits the frontends.
 *
 * <p>While an image copy is under way (after a peer attach, until COPY_DONE) nothing is replayed. The mirror is
 * catching up until (a) every frontend's applied transaction reached the backend's as of the copy's end, and (b)
 * every frontend attached to the backend (as the backend last reported, REPLICATE FRONTENDS) has told this mirror,
 * under that same backend attach epoch, that it posts here every semantic record after some transaction S
 * (MIRROR_POSTING), and this mirror applied S. Then it is in sync, and stays so until the next copy.
 *
 * <p>Why (b) is the rule (issue 9, a mirror joining while frontends run). Promoting this mirror loses nothing only
 * if, for every frontend f, each of f's acknowledged transactions is either applied here or has its semantic record
 * in this mirror's ring after the mirror's semantic head. A transaction of f is acknowledged only once its record is
 * durable on the backend and on every mirror f posts to. Once f's statement holds, every transaction after S is
 * in this ring (re-posted and FLUSHed before the statement, dual-posted after it); every one up to S is applied
 * here once applied ≥ S (and then the mirror's semantic head lies past S's record, so a resumed frontend re-executes
 * exactly the records after what is applied). The attach epoch binds the statement to one incarnation: a new
 * incarnation (or a reconnect) of f attaches to the backend under a new epoch and must state it again, so a
 * frontend that restarted without this mirror never counts. A frontend not attached to the backend commits nothing;
 * one that detached is still reported, under its last attach epoch, until this mirror applied every commit of it
 * (its commits before R, or all of them if it never declared, reach this mirror as redo only; see MirrorShipper).
 * A frontend that drops this mirror (its link broke; an operator or the cluster follower) acknowledges commits
 * without posting them here, so its declaration must stop counting before it does: it raises its posting generation
 * on the backend ({@link PostingEpoch}, POSTING_GENERATION), the backend reports it (FRONTENDS) and waits for this
 * mirror's reply, and a declaration the raised generation voids turns an in-sync mirror catching up (the only way
 * back short of a new copy) until the frontend declares it again (adds it back). The mirrors it keeps it re-declares
 * under the raised generation first, so they stay in sync. A frontend's new attach epoch alone (a reconnect) does not
 * turn an in-sync mirror catching up: the frontend still posts to every mirror it declared.
 * The residual window: a frontend that attaches to the backend after the last FRONTENDS report and before the
 * mirror turns in sync is not counted; frontends therefore attach to every SYNC mirror of the configuration, also
 * catching-up ones, before their first commit (see ClusterFollower).
 * Thread-safe: the replayer calls it under its own monitor, control calls under the replayer's monitor too.
 *
 * <p>Its state survives a restart through a {@link MirrorStateStore}: a node that restarts with an in-sync mark of
 * its epoch starts in sync, unpaused, and replays up to the persisted confirmed limits; otherwise it starts paused
 * and catching up, waiting for a peer's copy, as before.
 */
public final class MirrorReplayGate implements ReplayGate {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorReplayGate.class);
    private final Superblock sb;
    private final FrontendLog[] logs;
    private final SlabTable slabs;
    private final long[] limits;
    /** Slab events {slab, ownerWord, barrier} not applied yet, in the backend's order. */
    private final java.util.ArrayDeque<long[]> events = new java.util.ArrayDeque<>();
    private long[] targets;
    /** The backend's attach epoch per frontend (0: not attached), as last reported; null until reported. */
    private long[] backendEpochs;
    /** Per frontend, its MIRROR_POSTING {backendAttachEpoch, sinceTxId}, or null. */
    private final long[][] posting;
    private boolean paused = true;
    private volatile int state = ReplicationLayout.STATE_CATCHING_UP;
    private final MirrorStateStore store;
    private final boolean restartedInSync;

    /** A gate whose state is not persisted (starts catching up; a restart always needs a new copy). */
    public MirrorReplayGate(Superblock sb, FrontendLog[] logs, SlabTable slabs) {
        this(sb, logs, slabs, null);
    }

    /** A gate persisting its state in {@code store} (null: not persisted), resuming from it when in sync. */
    public MirrorReplayGate(Superblock sb, FrontendLog[] logs, SlabTable slabs, MirrorStateStore store) {
        this.sb = sb;
        this.logs = logs;
        this.slabs = slabs;
        this.store = store;
        this.limits = new long[logs.length];
        this.posting = new long[logs.length][];
        for (int f = 0; f < logs.length; f++) {
            limits[f] = logs[f].checkpoint().redoHead();
        }
        if (store != null && store.restartsInSync()) {
            targets = new long[logs.length];
            for (int f = 0; f < logs.length; f++) {
                limits[f] = store.restartLimit(f);
                targets[f] = logs[f].checkpoint().appliedTxId();
            }
            paused = false;
            state = ReplicationLayout.STATE_IN_SYNC;
        }
        this.restartedInSync = state == ReplicationLayout.STATE_IN_SYNC;
    }

    /** Whether this node restarted in sync from its persisted mark. */
    public boolean restartedInSync() {
        return restartedInSync;
    }

    /** {@link ReplicationLayout#STATE_CATCHING_UP} or {@link ReplicationLayout#STATE_IN_SYNC}. */
    public int state() {
        return state;
    }

    @Override
    public synchronized long limit(int frontendId) {
        return paused ? Long.MIN_VALUE : limits[frontendId];
    }

    /** The redo limit of frontend {@code frontendId} (what was shipped to this mirror). */
    public synchronized long shippedLimit(int frontendId) {
        return limits[frontendId];
    }

    /** The applied transaction every frontend must reach before this mirror is in sync; null before a copy. */
    public synchronized long[] targets() {
        return targets == null ? null : targets.clone();
    }

    /**
     * FRONTENDS: the backend's posting epoch ({@link PostingEpoch}) of each frontend it waits for (0: none). A
     * frontend whose posting generation rose above its declaration here dropped this mirror: it acknowledges commits
     * without posting them here, so an in-sync mirror turns catching up (its persisted mark withdrawn) before the
     * backend lets that frontend go on, and is in sync again only once the frontend declares it anew.
     */
    synchronized void frontends(long[] postingEpochs) {
        backendEpochs = postingEpochs.clone();
        if (state == ReplicationLayout.STATE_IN_SYNC) {
            for (int f = 0; f < logs.length; f++) {
                long[] p = posting[f];
                if (backendEpochs[f] != 0 && PostingEpoch.voids(backendEpochs[f], p == null ? 0 : p[0])) {
                    if (store != null) {
                        store.withdraw(); // before the reply lets the frontend acknowledge commits without it
                    }
                    state = ReplicationLayout.STATE_CATCHING_UP;
                    LOG.warn("frontend {} dropped this mirror ({}; its declaration here: {}): catching up until it "
                            + "declares it again", f, PostingEpoch.describe(backendEpochs[f]),
                            p == null ? "none" : PostingEpoch.describe(p[0]));
                    break;
                }
            }
        }
        updateState();
    }

    /** MIRROR_POSTING of {@code frontendId}: it posts every record after {@code sinceTxId} here. */
    synchronized void posting(int frontendId, long backendAttachEpoch, long sinceTxId) {
        posting[frontendId] = new long[] {backendAttachEpoch, sinceTxId};
        updateState();
    }

    /**
     * Why this mirror is not in sync, naming the first frontend that holds it back (or the copy); null when it
     * is in sync.
     */
    public synchronized String behind() {
        if (state == ReplicationLayout.STATE_IN_SYNC) {
            return null;
        }
        if (targets == null) {
            return "no image copy from a backend has completed";
        }
        for (int f = 0; f < logs.length; f++) {
            long applied = logs[f].checkpoint().appliedTxId();
            if (applied < targets[f]) {
                return "frontend " + f + " applied tx " + applied + " but the backend had applied tx " + targets[f]
                        + " when the copy ended";
            }
        }
        if (backendEpochs == null) {
            return "the backend has not said which frontends are attached to it";
        }
        for (int f = 0; f < logs.length; f++) {
            String why = postingProblem(f);
            if (why != null) {
                return why;
            }
        }
        return "not evaluated yet";
    }

    private String postingProblem(int f) {
        long e = backendEpochs[f];
        if (e == 0) {
            return null;
        }
        long[] p = posting[f];
        if (PostingEpoch.voids(e, p == null ? 0 : p[0])) {
            return "frontend " + f + " dropped a SYNC mirror (the backend reports " + PostingEpoch.describe(e)
                    + ") and has not declared this one under it (" + (p == null ? "no MIRROR_POSTING"
                    : "its MIRROR_POSTING here names " + PostingEpoch.describe(p[0])) + "): it acknowledges commits "
                    + "without posting them here";
        }
        if (p == null || !PostingEpoch.covers(p[0], e)) {
            return "frontend " + f + " (attached to the backend under " + PostingEpoch.describe(e) + ", or detached "
                    + "from it with commits this mirror has not applied) has not declared this mirror SYNC ("
                    + (p == null ? "no MIRROR_POSTING" : "its MIRROR_POSTING names " + PostingEpoch.describe(p[0]))
                    + "): its acknowledged commits may be on the backend only";
        }
        long applied = logs[f].checkpoint().appliedTxId();
        if (applied < p[1]) {
            return "frontend " + f + " posts here from tx " + (p[1] + 1) + " but this mirror applied only tx "
                    + applied;
        }
        return null;
    }

    /** A new peer is about to copy the image: replay nothing until {@link #copyDone}. */
    synchronized void pause() {
        if (store != null) {
            store.clear(); // before anything the mark vouched for is zeroed or overwritten
        }
        paused = true;
        targets = null;
        backendEpochs = null;
        state = ReplicationLayout.STATE_CATCHING_UP;
    }

    /** The copy is complete: replay from the copy's checkpoints (already rebased) up to their redo heads. */
    synchronized void copyDone(long[][] copy) {
        targets = new long[logs.length];
        for (int f = 0; f < logs.length; f++) {
            limits[f] = copy[f][1];
            targets[f] = copy[f][3];
        }
        events.clear();
        paused = false;
        updateState();
    }

    /** The backend shipped redo up to {@code redoLimits}, and these slab events {slab, ownerWord, barrier}. */
    synchronized void shipped(long[] redoLimits, long[][] slabEvents) {
        if (paused) {
            throw new IllegalStateException("REPLICATE SHIPPED before the image copy completed (COPY_DONE)");
        }
        for (long[] e : slabEvents) {
            if (e[1] < SlabTableLayout.FREE || e[1] > SlabTableLayout.ownerWord(logs.length - 1)) {
                throw new IllegalArgumentException("slab event for slab " + e[0] + " names owner word " + e[1]
                        + ", no frontend of this image (" + logs.length + " frontends)");
            }
        }
        for (long[] e : slabEvents) {
            events.add(e.clone());
        }
        for (int f = 0; f < logs.length; f++) {
            limits[f] = Math.max(limits[f], redoLimits[f]);
        }
    }

    @Override
    public synchronized void beginPass() {
        if (paused) {
            return;
        }
        while (!events.isEmpty()) {
            long[] e = events.peek();
            long slab = e[0];
            int owner = SlabTableLayout.ownerOf(e[1]);
            int applied = slabs.ownerOf(slab);
            if (owner < 0) { // a return: after its old owner's last writes to the slab
                if (applied >= 0 && logs[applied].checkpoint().redoHead() < e[2]) {
                    break; // later events wait too: the backend's order is kept
                }
                if (applied >= 0) {
                    slabs.free(slab);
                }
            } else if (applied != owner) { // a grant: cleaned and initialised as the backend did
                if (applied >= 0) {
                    slabs.free(slab);
                }
                slabs.assign(slab, owner);
            }
            events.poll();
        }
        if (store != null && events.isEmpty()) {
            store.confirm(limits); // every event shipped up to these limits is applied
        }
        updateState();
    }

    private void updateState() {
        if (state == ReplicationLayout.STATE_CATCHING_UP && targets != null && backendEpochs != null) {
            for (int f = 0; f < logs.length; f++) {
                if (logs[f].checkpoint().appliedTxId() < targets[f] || postingProblem(f) != null) {
                    return;
                }
            }
            if (store != null) {
                store.markInSync(); // the checkpoints that reached the targets are persisted
            }
            state = ReplicationLayout.STATE_IN_SYNC;
        }
    }

    @Override
    public synchronized String admit(int frontendId, List<long[]> writes) {
        long heap = sb.slabCount() * sb.slabSize();
        for (long[] w : writes) {
            if (w[0] < 0 || w[1] < 0 || w[0] > heap - w[1]) {
                return "redo write [" + w[0] + ", " + (w[0] + w[1]) + ") outside the heap of " + heap + " bytes";
            }
            long last = (w[0] + Math.max(w[1], 1) - 1) / sb.slabSize();
            for (long s = w[0] / sb.slabSize(); s <= last; s++) {
                if (slabs.ownerOf(s) == frontendId) {
                    continue;
                }
                if (grantQueued(s, frontendId)) {
                    return WAIT; // granted by the backend; taken over here once the events before it are applied
                }
                int owner = slabs.ownerOf(s);
                return "redo write [" + w[0] + ", " + (w[0] + w[1]) + ") of frontend " + frontendId + " in slab " + s
                        + ", which this mirror's slab table gives to "
                        + (owner < 0 ? "no frontend" : "frontend " + owner) + " and no shipped grant gives to it";
            }
        }
        return null;
    }

    private boolean grantQueued(long slab, int frontendId) {
        long word = SlabTableLayout.ownerWord(frontendId);
        for (long[] e : events) {
            if (e[0] == slab && e[1] == word) {
                return true;
            }
        }
        return false;
    }
}
