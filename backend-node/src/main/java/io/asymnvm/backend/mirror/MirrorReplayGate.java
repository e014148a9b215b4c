package io.asymnvm.backend.mirror;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.backend.replay.ReplayGate;
import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SlabTableLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;

import java.util.Arrays;
import java.util.List;

/**
 * A mirror's replay rule. It applies a frontend's redo only up to the position its backend shipped and flushed
 * (the limit of the last REPLICATE), never past it: bytes beyond are not known to be the backend's history.
 *
 * <p>It does not check writes against the slab table the way a backend does; it keeps its table in step with the
 * backend's. The backend grants and takes back slabs outside the redo stream (the grant's cleaning is a direct PM
 * write), so the mirror repeats them itself, in stream order: a slab the shipped table gives to a new owner is
 * taken from its old owner only once that owner's replay reached the redo limit shipped with the table (its last
 * writes to the slab came before the return), then cleaned and initialised with {@link SlabTable#assign} (the same
 * code as a grant), and only then may the new owner's batches write to it (they wait until then). So the mirror's
 * heap goes through the backend's states in the same order for every slab.
 *
 * <p>While an image copy is under way (after a peer attach, until COPY_DONE) nothing is replayed. The mirror is
 * catching up until every frontend's applied transaction reached the backend's as of the copy's end, then in sync.
 * Thread-safe: the replayer calls it under its own monitor, control calls under the replayer's monitor too.
 */
public final class MirrorReplayGate implements ReplayGate {
    private final Superblock sb;
    private final FrontendLog[] logs;
    private final SlabTable slabs;
    private final long[] limits;
    private final int[] shippedOwner;
    private final long[] releaseBarrier;
    private long[] targets;
    private boolean paused = true;
    private volatile int state = ReplicationLayout.STATE_CATCHING_UP;

    public MirrorReplayGate(Superblock sb, FrontendLog[] logs, SlabTable slabs) {
        this.sb = sb;
        this.logs = logs;
        this.slabs = slabs;
        this.limits = new long[logs.length];
        for (int f = 0; f < logs.length; f++) {
            limits[f] = logs[f].checkpoint().redoHead();
        }
        this.shippedOwner = new int[Math.toIntExact(sb.slabCount())];
        for (int s = 0; s < shippedOwner.length; s++) {
            shippedOwner[s] = slabs.ownerOf(s);
        }
        this.releaseBarrier = new long[shippedOwner.length];
        Arrays.fill(releaseBarrier, -1);
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

    /** A new peer is about to copy the image: replay nothing until {@link #copyDone}. */
    synchronized void pause() {
        paused = true;
        targets = null;
        state = ReplicationLayout.STATE_CATCHING_UP;
    }

    /** The copy is complete: replay from the copy's checkpoints (already rebased) up to their redo heads. */
    synchronized void copyDone(long[][] copy) {
        targets = new long[logs.length];
        for (int f = 0; f < logs.length; f++) {
            limits[f] = copy[f][1];
            targets[f] = copy[f][3];
        }
        for (int s = 0; s < shippedOwner.length; s++) {
            shippedOwner[s] = slabs.ownerOf(s);
        }
        Arrays.fill(releaseBarrier, -1);
        paused = false;
        updateState();
    }

    /** The backend shipped redo up to {@code redoLimits} and its slab table as {@code ownerWords}. */
    synchronized void shipped(long[] redoLimits, long[] ownerWords) {
        if (paused) {
            throw new IllegalStateException("REPLICATE SHIPPED before the image copy completed (COPY_DONE)");
        }
        for (int s = 0; s < shippedOwner.length; s++) {
            int owner = SlabTableLayout.ownerOf(ownerWords[s]);
            if (owner >= logs.length || ownerWords[s] < 0) {
                throw new IllegalArgumentException("shipped owner word " + ownerWords[s] + " of slab " + s
                        + " names no frontend of this image (" + logs.length + " frontends)");
            }
            if (owner == shippedOwner[s]) {
                continue;
            }
            int applied = slabs.ownerOf(s);
            if (applied >= 0 && applied != owner && releaseBarrier[s] < 0) {
                releaseBarrier[s] = redoLimits[applied]; // its writes to the slab all lie before this position
            }
            shippedOwner[s] = owner;
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
        for (int s = 0; s < shippedOwner.length; s++) {
            int shipped = shippedOwner[s];
            int applied = slabs.ownerOf(s);
            if (shipped == applied) {
                releaseBarrier[s] = -1;
                continue;
            }
            if (applied >= 0) {
                if (logs[applied].checkpoint().redoHead() < releaseBarrier[s]) {
                    continue; // the old owner still has shipped batches to apply, which may write to it
                }
                slabs.free(s);
            }
            releaseBarrier[s] = -1;
            if (shipped >= 0) {
                slabs.assign(s, shipped);
            }
        }
        updateState();
    }

    private void updateState() {
        if (state == ReplicationLayout.STATE_CATCHING_UP && targets != null) {
            for (int f = 0; f < logs.length; f++) {
                if (logs[f].checkpoint().appliedTxId() < targets[f]) {
                    return;
                }
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
                if (shippedOwner[(int) s] == frontendId) {
                    return WAIT; // granted by the backend; taken over here once its old owner is done with it
                }
                return "redo write [" + w[0] + ", " + (w[0] + w[1]) + ") of frontend " + frontendId + " in slab " + s
                        + ", which the backend's shipped table gives to "
                        + (shippedOwner[(int) s] < 0 ? "no frontend" : "frontend " + shippedOwner[(int) s]);
            }
        }
        return null;
    }
}
