package io.asymnvm.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.cluster.ClusterBackend;
import io.asymnvm.cluster.BackendGuard;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.ClusterStore;
import io.asymnvm.cluster.FailoverCoordinator;
import io.asymnvm.cluster.FailoverReport;
import io.asymnvm.cluster.Lease;
import io.asymnvm.cluster.MirrorInfo;
import io.asymnvm.cluster.MirrorLeases;
import io.asymnvm.cluster.MirrorState;
import io.asymnvm.cluster.NodeEndpoint;
import io.asymnvm.cluster.Promotion;
import io.asymnvm.cluster.ReplicationMode;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;

/**
 * A mirror process on the cluster's ZooKeeper (issue 9, items 3 to 5): finds the backend in the configuration,
 * takes its liveness lease, joins the backend (ADD_MIRROR: image copy, then the redo stream), adds itself to the
 * configuration as a {@code CATCHING_UP} SYNC mirror (the backend marks it {@code IN_SYNC} once its shipper says
 * so), and runs the {@link FailoverCoordinator}. When the backend's lease lapses and this mirror is in sync, the
 * coordinator promotes it: replay is finished, the configuration names it at epoch + 1, then
 * {@link MirrorNode#promote} makes it serve that epoch, and from then on it is the backend
 * ({@link ClusterBackend#afterPromotion}): fenced by a newer configuration, marking the mirrors that join it in
 * sync, dropping those that die.
 */
public final class ClusterMirror implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterMirror.class);
    private static final int CAS_TRIES = 16;

    private final ClusterSession session;
    private final String selfId;
    private final MirrorNode mirror;
    private final Lease mirrorLease;
    private final BackendGuard.Fence fence;
    private final NodeEndpoint endpoint;
    private final ExecutorService rejoins;
    private final ReplicationMode mode;
    private volatile FailoverCoordinator coordinator;
    private volatile ClusterBackend backend;
    private volatile ClusterStore.Watch configWatch;
    private volatile boolean closed;
    private static final int FOLLOW_ATTEMPTS = 100;
    private static final long FOLLOW_RETRY_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(100);
    /** The backend this mirror's node is shipped to from (changes when another mirror is promoted). */
    private volatile NodeEndpoint following;

    private ClusterMirror(ClusterSession session, String selfId, MirrorNode mirror, Lease mirrorLease,
                          BackendGuard.Fence fence, NodeEndpoint endpoint, ReplicationMode mode) {
        this.mode = mode;
        this.session = session;
        this.selfId = selfId;
        this.mirror = mirror;
        this.mirrorLease = mirrorLease;
        this.fence = fence;
        this.endpoint = endpoint;
        this.rejoins = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "mirror-rejoin-" + selfId);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * A mirror whose session expired (its lease lapsed, e.g. a long pause) was dropped from the configuration by the
     * backend: while it is still a mirror it takes its lease again and rejoins as {@code CATCHING_UP}; the backend
     * marks it in sync again once its shipper says so. Frontends that dropped it post to it after they reconnect.
     */
    private void rejoinLater(String why) {
        if (closed || backend != null
                || session.curator().getState() != org.apache.curator.framework.imps.CuratorFrameworkState.STARTED) {
            return; // closing, promoted, or the session was closed by its owner (not lost)
        }
        try {
            rejoins.execute(() -> {
                if (closed || backend != null) {
                    return;
                }
                try {
                    if (mirrorLease.state() != Lease.State.HELD) {
                        mirrorLease.reclaim();
                    }
                    ClusterConfig c = session.store().read().value();
                    if (!c.isBackend(selfId) && c.mirror(selfId).isEmpty()) {
                        session.store().update(x -> x.isBackend(selfId) ? x : join(x, endpoint, mode), CAS_TRIES);
                        // the backend stopped shipping when it dropped this mirror: ask it for a new shipper
                        mirror.reattach(c.backend().host(), c.backend().port());
                        LOG.warn("mirror '{}' rejoined the configuration of epoch {} ({})", selfId, c.epoch(), why);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("mirror '{}' could not rejoin yet ({}): {}", selfId, why, e.getMessage());
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("mirror '{}' closed", selfId);
        }
    }

    /**
     * Another mirror was promoted (several mirrors, issue 9): the promotion listed this one {@code CATCHING_UP}, and
     * this node asks the new backend to ship to it (ADD_MIRROR; its node accepts the newer epoch's peer, image copy,
     * then redo). The new backend marks it {@code IN_SYNC} once its shipper says so.
     */
    private void followLater(ClusterConfig c) {
        NodeEndpoint next = c.backend();
        try {
            rejoins.execute(() -> {
                if (closed || backend != null || next.equals(following)) {
                    return;
                }
                // the new backend serves a moment after the configuration names it: retry, bounded
                for (int attempt = 1; attempt <= FOLLOW_ATTEMPTS && !closed; attempt++) {
                    try {
                        mirror.reattach(next.host(), next.port());
                        following = next;
                        LOG.warn("mirror '{}' follows the new backend {} of epoch {}", selfId, next, c.epoch());
                        return;
                    } catch (RuntimeException e) {
                        LOG.warn("mirror '{}' could not attach to the new backend {} yet (attempt {}): {}", selfId,
                                next, attempt, e.getMessage());
                        java.util.concurrent.locks.LockSupport.parkNanos(FOLLOW_RETRY_NANOS);
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("mirror '{}' closed", selfId);
        }
    }

    /**
     * Starts mirror {@code selfId} of the backend {@code session}'s configuration names.
     *
     * @param advertiseHost where frontends and the backend reach this node (recorded in the configuration; the
     *     backend ships to {@code config.bindHost()})
     * @param fence called once if this node, after a promotion, is replaced in turn
     */
    public static ClusterMirror start(ClusterSession session, String selfId, BackendConfiguration config,
                                      String advertiseHost, BackendGuard.Fence fence) {
        return start(session, selfId, config, advertiseHost, fence, ReplicationMode.SYNC);
    }

    /**
     * {@link #start(ClusterSession, String, BackendConfiguration, String, BackendGuard.Fence)} as a mirror of
     * {@code mode}: an ASYNC mirror is shipped the frontends' semantic records by the backend within its lag bounds,
     * is not posted to by frontends, and is promoted only when no in-sync SYNC mirror holds its lease (issue 9).
     */
    public static ClusterMirror start(ClusterSession session, String selfId, BackendConfiguration config,
                                      String advertiseHost, BackendGuard.Fence fence, ReplicationMode mode) {
        java.util.Objects.requireNonNull(mode, "mode");
        NodeEndpoint.requireNodeId("--node-id", selfId);
        ClusterConfig cluster = session.store().read().value();
        if (cluster.isBackend(selfId)) {
            throw new AsymNvmException(ErrorCode.STALE_EPOCH, "node '" + selfId + "' is the backend of epoch "
                    + cluster.epoch() + " in the cluster configuration; start it as backend, not as mirror");
        }
        ClusterMirror[] self = new ClusterMirror[1];
        Lease lease = MirrorLeases.hold(session, selfId, (l, state) -> {
            if (state == Lease.State.LOST && self[0] != null) {
                self[0].rejoinLater("its lease was lost");
            }
        });
        MirrorNode mirror;
        try {
            NodeEndpoint backend = cluster.backend();
            mirror = MirrorNode.start(config, backend.host(), backend.port(), mode == ReplicationMode.ASYNC);
        } catch (RuntimeException e) {
            lease.close();
            throw e;
        }
        ClusterMirror m = new ClusterMirror(session, selfId, mirror, lease, fence,
                new NodeEndpoint(selfId, advertiseHost, mirror.port()), mode);
        self[0] = m;
        m.following = cluster.backend();
        try {
            session.store().update(c -> join(c, m.endpoint, mode), CAS_TRIES);
            m.coordinator = FailoverCoordinator.start(session, selfId, m.new MirrorPromotion());
            // a session lost while ZooKeeper was away: take the lease back as soon as it is reachable again,
            // before the old session's znode expires and the backend drops this mirror (ZooKeeper-loss drill)
            session.curator().getConnectionStateListenable().addListener((client, state) -> {
                if (state == org.apache.curator.framework.state.ConnectionState.RECONNECTED
                        && m.mirrorLease.state() == Lease.State.LOST) {
                    m.rejoinLater("reconnected to ZooKeeper after its session was lost");
                }
            });
            m.configWatch = session.store().watch(c -> {
                if (!c.isBackend(selfId) && c.mirror(selfId).isEmpty()) {
                    m.rejoinLater("the configuration of epoch " + c.epoch() + " does not list it");
                } else if (!c.isBackend(selfId) && !c.backend().equals(m.following)) {
                    m.followLater(c);
                }
            });
        } catch (RuntimeException e) {
            m.close();
            throw e;
        }
        LOG.info("mirror '{}' joined backend {} of epoch {}", selfId, cluster.backend(), cluster.epoch());
        return m;
    }

    /** The configuration with this mirror as a catching-up SYNC mirror at {@code self} (a rejoin replaces it). */
    static ClusterConfig join(ClusterConfig c, NodeEndpoint self) {
        return join(c, self, ReplicationMode.SYNC);
    }

    /** The configuration with this mirror as a catching-up mirror of {@code mode} at {@code self}. */
    static ClusterConfig join(ClusterConfig c, NodeEndpoint self, ReplicationMode mode) {
        MirrorInfo fresh = new MirrorInfo(self, mode, MirrorState.CATCHING_UP);
        Optional<MirrorInfo> old = c.mirror(self.id());
        if (old.isPresent() && old.get().node().equals(self) && old.get().mode() == mode) {
            return c; // listed already (its state is the backend's to set)
        }
        return (old.isPresent() ? c.dropMirror(self.id()) : c).withMirror(fresh);
    }

    /** Finishes replay and serves at the configuration's new epoch (called by the coordinator). */
    private final class MirrorPromotion implements Promotion {
        @Override
        public long finishReplay() {
            if (!mirror.inSync()) {
                throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, "mirror '" + selfId + "' (epoch "
                        + mirror.epoch() + ") is still catching up: not promoting");
            }
            mirror.node().awaitReplayed();
            long applied = 0;
            StringBuilder held = new StringBuilder();
            for (int f = 0; f < mirror.node().superblock().maxFrontends(); f++) {
                var log = mirror.node().frontendLog(f);
                applied = Math.max(applied, log.checkpoint().appliedTxId());
                if (mode == ReplicationMode.ASYNC) {
                    io.asymnvm.backend.log.FrontendLog.SemanticTail tail;
                    try {
                        tail = log.scanSemantic(); // shipped records a frontend re-executes when it attaches
                    } catch (AsymNvmException e) {
                        held.append(held.length() == 0 ? "" : ", ").append("frontend ").append(f).append(": ")
                                .append(e.getMessage());
                        continue;
                    }
                    if (tail.records() == 0 && log.checkpoint().appliedTxId() == 0) {
                        continue;
                    }
                    held.append(held.length() == 0 ? "" : ", ").append("frontend ").append(f).append(": applied tx ")
                            .append(log.checkpoint().appliedTxId()).append(" + ").append(tail.records())
                            .append(" logged up to tx ").append(tail.lastTxId());
                }
            }
            if (mode == ReplicationMode.ASYNC) {
                // what it may lack: commits acknowledged by the lost backend after the shipper's last pass
                LOG.warn("ASYNC mirror '{}' promoted with {}; commits acknowledged after the backend's last "
                        + "shipment (at most its lag bound) are not here", selfId, held.length() == 0
                        ? "no transaction of any frontend" : held);
            }
            return applied;
        }

        @Override
        public void promote(long newEpoch, ClusterConfig config) {
            if (mirror.epoch() + 1 != newEpoch) {
                throw new AsymNvmException(ErrorCode.STALE_EPOCH, "mirror '" + selfId + "' is at epoch "
                        + mirror.epoch() + "; promotion would serve epoch " + (mirror.epoch() + 1)
                        + " but the configuration names it backend of epoch " + newEpoch);
            }
            long served = mirror.promote();
            Lease lease = coordinator.backendLease().orElseThrow(() -> new IllegalStateException(
                    "promoted without the backend lease"));
            backend = ClusterBackend.afterPromotion(session, selfId, mirror.node(), config, lease, fence);
            mirrorLease.close(); // a backend now, not a mirror
            LOG.info("mirror '{}' serves as backend of epoch {}", selfId, served);
        }
    }

    /** The promotion's timeline once this mirror was promoted. */
    public Optional<FailoverReport> report() {
        FailoverCoordinator c = coordinator;
        return c == null ? Optional.empty() : c.report();
    }

    /** Present once this mirror serves as the backend. */
    public Optional<ClusterBackend> backend() {
        return Optional.ofNullable(backend);
    }

    public MirrorNode mirror() {
        return mirror;
    }

    public int port() {
        return mirror.port();
    }

    /** Stops watching, releases the leases, closes the node. */
    @Override
    public void close() {
        closed = true;
        ClusterStore.Watch w = configWatch;
        if (w != null) {
            w.close();
        }
        rejoins.shutdownNow();
        FailoverCoordinator c = coordinator;
        if (c != null) {
            c.close();
        }
        ClusterBackend b = backend;
        if (b != null) {
            b.close();
        }
        mirrorLease.close();
        mirror.close();
    }
}
