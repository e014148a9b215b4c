package io.asymnvm.backend.mirror;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.layout.MirrorStateLayout;
import io.asymnvm.core.layout.MirrorStateLayout.Mark;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import io.asymnvm.core.region.PersistentRegion;

/**
 * A mirror's replication state on its media ({@link MirrorStateLayout}), so a mirror that lost power or restarted
 * knows whether it is still in sync and how far to replay.
 *
 * <p><b>When it is written, and why that order is safe.</b> What the mark vouches for is already durable when it is
 * written, and it is withdrawn before anything it vouches for is destroyed:
 * <ul>
 * <li>In sync ({@link #markInSync}) once every frontend's persisted checkpoint reached the backend's applied
 *     transaction as of the copy's end: the heap up to those checkpoints is persisted (the replayer persists the
 *     heap before a checkpoint), and every acknowledged transaction after them has its semantic record durable in
 *     this node's semantic ring (SYNC frontends FLUSH it here before their commit returns, and release ring space
 *     only below this node's published checkpoint).</li>
 * <li>A frontend's confirmed redo limit ({@link #confirm}) is raised to the limit of REPLICATE SHIPPED once every
 *     slab event shipped with or before it is applied (the replay gate calls it with its event queue empty): the
 *     shipper FLUSHed the bytes before it sent SHIPPED, and replaying up to that limit after a restart needs no
 *     slab event the restart lost.</li>
 * <li>Cleared ({@link #clear}) when a new peer attaches, under the replayer's monitor, before the redo rings are
 *     zeroed and before the peer may write the heap; the confirmed limits are zeroed after the mark (a crash
 *     between the two leaves a cleared mark, so the stale limits vouch for nothing).</li>
 * </ul>
 * The mark carries the node's epoch: a node that follows a newer backend stores the new epoch first, which makes
 * an older in-sync mark void before the new peer touches anything. Promotion needs no clear: the promoted epoch
 * differs from the mark's, and until it is stored the image still is an in-sync mirror.
 *
 * <p>Not thread-safe: called by {@link MirrorReplayGate} under its monitor.
 */
public final class MirrorStateStore {
    private final PersistentRegion region;
    private final Superblock sb;
    private final FrontendLog[] logs;
    private final long[] confirmed;
    private final Mark recovered;

    public MirrorStateStore(PersistentRegion region, Superblock sb, FrontendLog[] logs) {
        this.region = region;
        this.sb = sb;
        this.logs = logs;
        this.confirmed = new long[logs.length];
        this.recovered = MirrorStateLayout.read(region);
        for (int f = 0; f < logs.length; f++) {
            confirmed[f] = MirrorStateLayout.confirmedLimit(region, sb.controlBlockOf(f));
        }
    }

    /** The mark found when the node started. */
    public Mark recovered() {
        return recovered;
    }

    /** Whether the node restarted in sync: an in-sync mark written under the node's current epoch. */
    public boolean restartsInSync() {
        return recovered.inSync() && recovered.epoch() == SuperblockLayout.effectiveEpoch(region, sb);
    }

    /** Frontend {@code f}'s redo position to replay up to after a restart in sync (at least its checkpoint). */
    public long restartLimit(int f) {
        return Math.max(logs[f].checkpoint().redoHead(), confirmed[f]);
    }

    /** Persists the in-sync mark under the node's current epoch. */
    void markInSync() {
        MirrorStateLayout.write(region, SuperblockLayout.effectiveEpoch(region, sb), ReplicationLayout.STATE_IN_SYNC);
    }

    /**
     * Persists a catching-up mark and keeps the confirmed limits (no new copy: replay goes on; a frontend's
     * declaration no longer counts, see {@link MirrorReplayGate#frontends}).
     */
    void withdraw() {
        MirrorStateLayout.write(region, SuperblockLayout.effectiveEpoch(region, sb),
                ReplicationLayout.STATE_CATCHING_UP);
    }

    /** Persists a cleared mark, then zeroes the confirmed limits (a new image copy starts). */
    void clear() {
        MirrorStateLayout.write(region, SuperblockLayout.effectiveEpoch(region, sb),
                ReplicationLayout.STATE_CATCHING_UP);
        for (int f = 0; f < logs.length; f++) {
            if (confirmed[f] != 0) {
                MirrorStateLayout.writeConfirmedLimit(region, sb.controlBlockOf(f), 0);
                confirmed[f] = 0;
            }
        }
    }

    /**
     * Raises each frontend's persisted confirmed limit to {@code limits} (one atomic store each, only where it moved
     * and lies past the frontend's checkpoint: a restart replays from the checkpoint anyway).
     */
    void confirm(long[] limits) {
        for (int f = 0; f < logs.length; f++) {
            if (limits[f] > confirmed[f] && limits[f] > logs[f].checkpoint().redoHead()) {
                MirrorStateLayout.writeConfirmedLimit(region, sb.controlBlockOf(f), limits[f]);
                confirmed[f] = limits[f];
            }
        }
    }
}
