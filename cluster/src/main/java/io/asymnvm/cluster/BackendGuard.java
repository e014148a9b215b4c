package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs in the backend process: decides at start whether this node may serve, holds the backend lease while it does,
 * and fences the node when the cluster moves on (issue 9, items 3 and 9).
 *
 * <ul>
 *   <li>At start the configuration must name this node as backend at exactly its superblock epoch and serve its
 *       image. A node whose epoch is older (it was replaced: a mirror was promoted) is refused with
 *       {@link ErrorCode#STALE_EPOCH} naming both epochs: a replaced backend never serves its old epoch; it may rejoin
 *       as a mirror. A different image is {@link ErrorCode#IDENTITY_MISMATCH}.
 *   <li>Then it takes the backend lease (waiting up to a lease for its own previous incarnation's session to expire,
 *       or replacing that stale znode), and re-checks the configuration under the lease.
 *   <li>While serving, a configuration with a newer epoch or another backend fences the node: {@link Fence#fenced}
 *       is called once, the lease is released, {@link #isServing()} turns false.
 *   <li>Losing ZooKeeper does not stop the backend (see {@link Lease}): it keeps serving its epoch; after a
 *       reconnect it re-reads the configuration and either reclaims its lease or fences itself.
 * </ul>
 */
public final class BackendGuard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(BackendGuard.class);

    /** Told once when this backend must stop serving (answer {@code NOT_PRIMARY} / {@code STALE_EPOCH} from then on). */
    @FunctionalInterface
    public interface Fence {
        void fenced(ClusterConfig current, String reason);
    }

    private final ClusterSession session;
    private final String selfId;
    private final long epoch;
    private final Fence fence;
    private final AtomicBoolean fenced = new AtomicBoolean();
    private final ExecutorService executor;
    private final ConnectionStateListener connectionListener;
    private volatile Lease lease;
    private volatile ClusterStore.Watch configWatch;

    private BackendGuard(ClusterSession session, String selfId, long epoch, Fence fence) {
        this.session = session;
        this.selfId = selfId;
        this.epoch = epoch;
        this.fence = fence;
        this.executor = ClusterThreads.single("backend-guard-" + selfId);
        this.connectionListener = (c, s) -> {
            if (s == ConnectionState.RECONNECTED) {
                run(this::afterReconnect);
            }
        };
    }

    /**
     * Checks that this node may serve and takes the backend lease.
     *
     * @param selfId this backend's node id
     * @param imageId the identity in this node's superblock
     * @param superblockEpoch the epoch in this node's superblock
     * @param leaseWaitMillis how long to wait for a previous holder's session to end (a lease is enough)
     * @throws AsymNvmException {@link ErrorCode#STALE_EPOCH} or {@link ErrorCode#IDENTITY_MISMATCH} (see the class
     *     comment); {@link ErrorCode#NOT_PRIMARY} if another node holds the backend lease
     */
    public static BackendGuard start(ClusterSession session, String selfId, UUID imageId, long superblockEpoch,
            long leaseWaitMillis, Fence fence) {
        NodeEndpoint.requireNodeId("backend id", selfId);
        checkMayServe(session.store().read().value(), selfId, imageId, superblockEpoch);
        BackendGuard guard = new BackendGuard(session, selfId, superblockEpoch, fence);
        Lease lease = Lease.acquire(session, session.paths().backendLease(), selfId, leaseWaitMillis,
                guard::onLease);
        try {
            checkMayServe(session.store().read().value(), selfId, imageId, superblockEpoch);
        } catch (RuntimeException e) {
            lease.close();
            guard.executor.shutdownNow();
            throw e;
        }
        guard.begin(lease);
        return guard;
    }

    /**
     * Guards a mirror just promoted by {@link FailoverCoordinator}, which hands over the backend lease it holds.
     */
    public static BackendGuard afterPromotion(ClusterSession session, String selfId, ClusterConfig promoted,
            Lease lease, Fence fence) {
        if (!promoted.isBackend(selfId) || !lease.holderId().equals(selfId)) {
            throw new IllegalArgumentException("configuration of epoch " + promoted.epoch() + " names backend "
                    + promoted.backend() + " and the lease is held by '" + lease.holderId() + "', not by '" + selfId
                    + "'");
        }
        BackendGuard guard = new BackendGuard(session, selfId, promoted.epoch(), fence);
        guard.begin(lease);
        return guard;
    }

    private void begin(Lease held) {
        this.lease = held;
        session.curator().getConnectionStateListenable().addListener(connectionListener);
        configWatch = session.store().watch(this::onConfig);
        LOG.info("backend '{}' serves epoch {} holding {}", selfId, epoch, held.path());
    }

    /**
     * The start rule: the configuration names this node at exactly its superblock epoch, for its image.
     *
     * @throws AsymNvmException naming both epochs (or both identities)
     */
    public static void checkMayServe(ClusterConfig config, String selfId, UUID imageId, long superblockEpoch) {
        if (!config.imageId().equals(imageId)) {
            throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "cluster serves image " + config.imageId()
                    + " but backend '" + selfId + "' holds image " + imageId);
        }
        if (config.epoch() > superblockEpoch) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "cluster is at epoch " + config.epoch()
                    + " with backend " + config.backend() + "; backend '" + selfId + "' has superblock epoch "
                    + superblockEpoch + ": a replaced backend never serves its old epoch (rejoin as a mirror)");
        }
        if (config.epoch() < superblockEpoch) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "backend '" + selfId + "' has superblock epoch "
                    + superblockEpoch + ", newer than the cluster configuration's epoch " + config.epoch()
                    + ": refusing a configuration from the past");
        }
        if (!config.isBackend(selfId)) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "cluster epoch " + config.epoch() + " names backend "
                    + config.backend() + ", not '" + selfId + "' (superblock epoch " + superblockEpoch
                    + "): two backends never share an epoch");
        }
    }

    private void onConfig(ClusterConfig config) {
        if (config.epoch() > epoch || !config.isBackend(selfId)) {
            fence(config, "cluster moved to epoch " + config.epoch() + " with backend " + config.backend()
                    + " (this backend '" + selfId + "' served epoch " + epoch + ")");
        }
    }

    private void onLease(Lease l, Lease.State state) {
        if (!fenced.get() && (state == Lease.State.SUSPENDED || state == Lease.State.LOST)) {
            LOG.warn("backend '{}' lease {}: keeps serving epoch {} (no promotion without ZooKeeper; checks the "
                    + "configuration on reconnect)", selfId, state, epoch);
        }
        if (state == Lease.State.LOST && !fenced.get()) {
            // the znode can also vanish while connected (deleted by hand): then no RECONNECTED follows, so check now
            run(this::afterReconnect);
        }
    }

    private void afterReconnect() {
        Lease l = lease;
        if (fenced.get() || l == null || l.state() != Lease.State.LOST) {
            return;
        }
        try {
            ClusterConfig config = session.store().read().value();
            if (config.epoch() != epoch || !config.isBackend(selfId)) {
                onConfig(config);
                return;
            }
            l.reclaim();
            LOG.info("backend '{}' reclaimed its lease at epoch {} after a lost session", selfId, epoch);
        } catch (AsymNvmException e) {
            if (e.errorCode() == ErrorCode.NOT_PRIMARY) {
                fence(null, "backend lease taken by another node while the session was lost: " + e.detail());
            } else {
                LOG.warn("backend '{}': configuration check after reconnect failed: {}", selfId, e.getMessage());
            }
        }
    }

    private void fence(ClusterConfig config, String reason) {
        if (!fenced.compareAndSet(false, true)) {
            return;
        }
        LOG.warn("backend '{}' fenced: {}", selfId, reason);
        Lease l = lease;
        if (l != null) {
            run(l::close);
        }
        fence.fenced(config, reason);
    }

    private void run(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("backend guard of '{}' closed; not running {}", selfId, task);
        }
    }

    /** True until fenced or closed. */
    public boolean isServing() {
        return !fenced.get();
    }

    /** The epoch this backend serves. */
    public long epoch() {
        return epoch;
    }

    public Lease lease() {
        return lease;
    }

    /** Stops guarding and releases the lease (a clean shutdown: mirrors may promote at once). */
    @Override
    public void close() {
        fenced.set(true);
        session.curator().getConnectionStateListenable().removeListener(connectionListener);
        ClusterStore.Watch w = configWatch;
        if (w != null) {
            w.close();
        }
        ClusterThreads.stop(executor, false);
        Lease l = lease;
        if (l != null) {
            l.close();
        }
    }
}
