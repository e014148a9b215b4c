package io.asymnvm.backend.cluster;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.image.PmImage;
import io.asymnvm.backend.mirror.MirrorShipper;
import io.asymnvm.cluster.BackendGuard;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.Lease;
import io.asymnvm.cluster.MirrorInfo;
import io.asymnvm.cluster.MirrorLeases;
import io.asymnvm.cluster.MirrorState;
import io.asymnvm.cluster.NodeEndpoint;
import io.asymnvm.cluster.Versioned;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A backend node on the cluster's ZooKeeper (issue 9, items 3 and 6): the start rule, the backend lease, and the
 * backend's duties towards the configuration's mirrors.
 *
 * <ul>
 *   <li><b>Start.</b> With no configuration yet, the node starts and creates it (epoch 1, its image, its
 *       endpoint). Otherwise, before anything is mapped or bound, the PM file's identity and epoch must be the
 *       configuration's, with this node as backend ({@link BackendGuard#checkMayServe}): a replaced backend is
 *       refused with {@code STALE_EPOCH} naming both epochs and never serves. Then {@link BackendGuard} holds the
 *       backend lease; a newer configuration fences the node ({@code fence} is called once, the owner stops it).
 *   <li><b>In sync.</b> A mirror joins the configuration as {@code CATCHING_UP}; when the shipper to it reports the
 *       mirror in sync, this backend marks it {@code IN_SYNC} (compare-and-set): from then on it may be promoted.
 *       A shipper that lost the mirror's pace (out of sync, refused), or an ASYNC mirror past its lag bound, sets
 *       it back to {@code CATCHING_UP}.
 *   <li><b>Mirror crash.</b> A mirror whose liveness lease ({@link MirrorLeases}) is gone (its session expired)
 *       is dropped from the configuration. Frontends meanwhile block their commits on it (a SYNC mirror is never
 *       skipped silently) and drop it once the configuration no longer lists it in sync.
 * </ul>
 *
 * <p>All configuration changes run on one thread of this object; a check runs on every change of the mirror
 * leases and every {@value #CHECK_MILLIS} ms (the shippers' state is polled: they have no listener).
 */
public final class ClusterBackend implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterBackend.class);
    static final long CHECK_MILLIS = 20;
    private static final int CAS_TRIES = 16;

    private final ClusterSession session;
    private final String selfId;
    private final BackendNode node;
    private final BackendGuard guard;
    private final ScheduledExecutorService executor;
    private final MirrorLeases leases;
    private volatile boolean closed;

    private ClusterBackend(ClusterSession session, String selfId, BackendNode node, BackendGuard guard) {
        this.session = session;
        this.selfId = selfId;
        this.node = node;
        this.guard = guard;
        this.executor = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cluster-backend-" + selfId);
            t.setDaemon(true);
            return t;
        });
        this.leases = MirrorLeases.watch(session, live -> run(this::check));
        executor.scheduleWithFixedDelay(this::check, CHECK_MILLIS, CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Starts the backend {@code selfId} of {@code session}'s cluster on {@code config} (see the class comment).
     *
     * @param advertiseHost the host mirrors and frontends reach this node at (recorded in the configuration)
     * @param fence called once when the cluster moved on; the owner must stop the node
     * @throws AsymNvmException {@code STALE_EPOCH} / {@code IDENTITY_MISMATCH} before anything is bound
     */
    public static ClusterBackend start(ClusterSession session, String selfId, BackendConfiguration config,
                                       String advertiseHost, BackendGuard.Fence fence) {
        NodeEndpoint.requireNodeId("--node-id", selfId);
        Optional<Versioned<ClusterConfig>> existing = session.store().readIfPresent();
        if (existing.isPresent()) {
            checkBeforeStart(existing.get().value(), selfId, config, advertiseHost);
        }
        BackendNode node = BackendNode.start(config);
        try {
            Superblock sb = node.superblock();
            if (existing.isEmpty()) {
                session.store().create(ClusterConfig.initial(sb.identity(),
                        new NodeEndpoint(selfId, advertiseHost, node.port())));
                LOG.info("created cluster configuration '{}': backend {}@{}:{}, image {}",
                        session.options().clusterName(), selfId, advertiseHost, node.port(), sb.identity());
            }
            BackendGuard guard = BackendGuard.start(session, selfId, sb.identity(), node.replication().epoch(),
                    session.options().leaseMillis(), fence);
            return new ClusterBackend(session, selfId, node, guard);
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
    }

    /** Takes the backend's duties on a mirror just promoted ({@code lease}: the backend lease it holds). */
    public static ClusterBackend afterPromotion(ClusterSession session, String selfId, BackendNode node,
                                                ClusterConfig promoted, Lease lease, BackendGuard.Fence fence) {
        BackendGuard guard = BackendGuard.afterPromotion(session, selfId, promoted, lease, fence);
        return new ClusterBackend(session, selfId, node, guard);
    }

    /** The start rule, on the PM file alone (nothing mapped or bound yet). */
    static void checkBeforeStart(ClusterConfig cluster, String selfId, BackendConfiguration config,
                                 String advertiseHost) {
        Path pm = config.pmFile();
        if (!Files.exists(pm)) {
            throw new AsymNvmException(ErrorCode.IDENTITY_MISMATCH, "cluster '" + cluster.backend() + "' at epoch "
                    + cluster.epoch() + " serves image " + cluster.imageId() + " but PM file " + pm
                    + " does not exist: a new node joins as a mirror, not as backend");
        }
        Superblock sb = PmImage.readSuperblock(pm);
        BackendGuard.checkMayServe(cluster, selfId, sb.identity(), Math.max(sb.epoch(), promotedEpochOf(pm)));
        NodeEndpoint recorded = cluster.backend();
        if (!recorded.host().equals(advertiseHost) || (config.port() != 0 && config.port() != recorded.port())) {
            throw new IllegalArgumentException("backend '" + selfId + "' is recorded at " + recorded.address()
                    + " in the cluster configuration of epoch " + cluster.epoch() + "; it must restart there, not at "
                    + advertiseHost + ":" + config.port());
        }
    }

    /** The promoted-epoch word of a PM file ({@link SuperblockLayout#PROMOTED_EPOCH_OFFSET}), read without mapping. */
    static long promotedEpochOf(Path pm) {
        try (FileChannel ch = FileChannel.open(pm, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            while (b.hasRemaining() && ch.read(b, SuperblockLayout.PROMOTED_EPOCH_OFFSET + b.position()) > 0) {
                // read fully
            }
            return b.hasRemaining() ? 0 : b.getLong(0);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read PM file " + pm, e);
        }
    }

    private void run(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            LOG.debug("cluster backend '{}' closed", selfId);
        }
    }

    /** One pass over the configuration's mirrors: drop the dead, mark the caught-up in sync. */
    private void check() {
        if (closed || !guard.isServing()) {
            return;
        }
        try {
            ClusterConfig config = session.store().read().value();
            if (!config.isBackend(selfId) || config.epoch() != guard.epoch()) {
                return; // the guard fences this node
            }
            Set<String> live = leases.live();
            for (MirrorInfo m : config.mirrors()) {
                if (!live.contains(m.id()) && !leaseExists(m.id())) {
                    session.store().update(c -> c.mirror(m.id()).isPresent() && c.isBackend(selfId)
                            ? c.dropMirror(m.id()) : c, CAS_TRIES);
                    node.replication().removeMirror(m.node().address()); // a fresh mirror gets a new shipper
                    LOG.warn("mirror {} lost its lease: dropped from the configuration of epoch {}", m.node(),
                            config.epoch());
                    continue;
                }
                MirrorShipper s = shipperOf(m.node());
                MirrorState want = s == null ? null
                        : s.behind() ? MirrorState.CATCHING_UP // ASYNC past its lag bound (issue 9): never silently
                        : s.phase() == MirrorShipper.Phase.STREAMING
                                && s.mirrorState() == ReplicationLayout.STATE_IN_SYNC ? MirrorState.IN_SYNC
                        // in sync no more: a frontend dropped it (its declaration voided), or a new copy began
                        : s.phase() == MirrorShipper.Phase.STREAMING
                                && s.mirrorState() == ReplicationLayout.STATE_CATCHING_UP ? MirrorState.CATCHING_UP
                        : s.phase() == MirrorShipper.Phase.OUT_OF_SYNC || s.phase() == MirrorShipper.Phase.REFUSED
                                ? MirrorState.CATCHING_UP : null;
                if (want != null && want != m.state()) {
                    session.store().update(c -> c.mirror(m.id()).isPresent() && c.isBackend(selfId)
                            ? c.withMirrorState(m.id(), want) : c, CAS_TRIES);
                    LOG.info("mirror {} is {} (epoch {})", m.node(), want, config.epoch());
                }
            }
        } catch (RuntimeException e) {
            if (!closed) {
                LOG.warn("cluster backend '{}': mirror check failed: {}", selfId, e.getMessage());
            }
        }
    }

    private boolean leaseExists(String mirrorId) {
        try {
            return session.curator().checkExists().forPath(session.paths().mirrorLease(mirrorId)) != null;
        } catch (Exception e) {
            return true; // ZooKeeper unreachable: decide nothing
        }
    }

    private MirrorShipper shipperOf(NodeEndpoint mirror) {
        for (MirrorShipper s : node.replication().shippers()) {
            if (s.name().equals(mirror.address())) {
                return s;
            }
        }
        return null;
    }

    public BackendNode node() {
        return node;
    }

    public BackendGuard guard() {
        return guard;
    }

    /** Stops the duties and releases the backend lease; the node itself is its owner's to close. */
    @Override
    public void close() {
        closed = true;
        leases.close();
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        guard.close();
    }
}
