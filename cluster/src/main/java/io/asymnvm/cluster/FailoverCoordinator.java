package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs in a mirror process: watches the backend's lease and, when it is gone and this mirror is {@code IN_SYNC} in
 * the current configuration, promotes this mirror (issue 9, item 4; Rowan-KV's and FaRM's lease → reconfiguration
 * → fencing).
 *
 * <h2>Order of a promotion, and why it is safe</h2>
 * <ol>
 *   <li>Noticed: the backend lease znode was deleted (its session expired: the backend died or was cut off for a
 *       whole lease), or it was missing at start, after a reconnect or when the configuration changed (e.g. this
 *       mirror became {@code IN_SYNC} while no backend held the lease).
 *   <li>Read the configuration at version V; go on only if this node is an {@code IN_SYNC} mirror of it (a
 *       {@code CATCHING_UP} mirror never promotes). An {@code ASYNC} mirror never promotes while an in-sync SYNC
 *       mirror holds its liveness lease; it waits one more delay while an in-sync
 *       {@code SYNC} mirror is listed, since only a SYNC mirror is sure to hold every acknowledged commit.
 *   <li>Take the backend lease (create its ephemeral znode). Exactly one node can hold it; a mirror that loses this
 *       race stops here. Holding it before the configuration changes means a returning backend cannot take it back
 *       in between, and a mirror that dies from here on releases it with its session, so the others retry.
 *   <li>Re-read: the configuration must still be at version V.
 *   <li>{@link Promotion#finishReplay()}: apply everything received, without serving.
 *   <li>Compare-and-set the configuration at version V to epoch + 1 with this mirror as backend. ZooKeeper decides:
 *       of two writers from version V one wins, and {@link ClusterStore} refuses a backend change without a higher
 *       epoch, so one epoch never has two backends.
 *   <li>{@link Promotion#promote(long, ClusterConfig)}: serve at the new epoch.
 * </ol>
 *
 * <b>CAS, then promote</b> (not promote, then CAS): a node serves an epoch only after ZooKeeper recorded it as that
 * epoch's backend, so a mirror that loses the CAS has served nothing and needs no undo, and no two nodes ever serve
 * one epoch. The cost is a short window in which the configuration names a backend that is not serving yet:
 * frontends that connect in it are refused with {@code NOT_PRIMARY} and retry. If the winner dies (or its
 * {@code promote} fails) after the CAS, its lease goes with its session and the remaining in-sync mirrors promote
 * at epoch + 2: epochs only grow, the configuration stays the single truth. A CAS whose reply was lost to a dropped
 * connection is recognised (the record after the expected version equals ours, see {@link ClusterStore}), and a
 * mirror that finds the configuration already naming it (its CAS landed unseen) takes the lease and serves that
 * epoch instead of leaving it orphaned.
 *
 * <p>While ZooKeeper is unreachable nothing happens: no lease deletion is seen and no CAS can succeed, so there is
 * no promotion without a quorum. After a reconnect the coordinator checks the lease again, but only after a grace
 * of {@value #RECONNECT_GRACE_LEASES} leases, so that a backend that merely lost its session in the same outage can
 * reclaim its lease first (the outage was ZooKeeper's, not the backend's).
 *
 * <p>All decisions run on one thread of this coordinator; {@link #close()} stops it.
 */
public final class FailoverCoordinator implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FailoverCoordinator.class);
    /** Re-attempts after a lost CAS or a configuration that moved under us, per notice. */
    private static final int MAX_RETRIES = 8;
    /**
     * After this mirror reconnects (ZooKeeper was away, e.g. restarted), it waits this many leases before it acts on
     * a missing backend lease: the backend lost its session in the same outage and needs a moment to reconnect and
     * reclaim its lease, and the outage was not the backend's failure.
     */
    static final int RECONNECT_GRACE_LEASES = 2;

    private final ClusterSession session;
    private final String selfId;
    private final Promotion promotion;
    private final long asyncDelayMillis;
    private final ScheduledExecutorService executor;
    private final CuratorCache leaseCache;
    private final ConnectionStateListener connectionListener;
    private final AtomicInteger notices = new AtomicInteger();
    private final AtomicInteger leaseChanges = new AtomicInteger();
    private final AtomicInteger notEligible = new AtomicInteger();
    private volatile boolean closed;
    private volatile boolean watching;
    private volatile boolean brokenPromotion;
    private volatile FailoverReport report;
    private volatile Lease backendLease;
    private volatile ClusterStore.Watch configWatch;
    private volatile long graceUntilNanos;
    private long noticedNanos;
    private long noticedMillis;
    private int retries;

    private FailoverCoordinator(ClusterSession session, String selfId, Promotion promotion, long asyncDelayMillis) {
        this.session = session;
        this.selfId = NodeEndpoint.requireNodeId("mirror id", selfId);
        this.promotion = promotion;
        this.asyncDelayMillis = asyncDelayMillis;
        this.executor = ClusterThreads.single("failover-" + selfId);
        this.leaseCache = CuratorCache.build(session.curator(), session.paths().backendLease(),
                CuratorCache.Options.SINGLE_NODE_CACHE);
        this.connectionListener = (c, s) -> {
            if (s == ConnectionState.RECONNECTED) {
                graceUntilNanos = System.nanoTime()
                        + TimeUnit.MILLISECONDS.toNanos(RECONNECT_GRACE_LEASES * (long) session.options().leaseMillis());
                notice("reconnected to ZooKeeper");
            }
        };
    }

    /** Starts watching with the default ASYNC-mirror delay of one lease. */
    public static FailoverCoordinator start(ClusterSession session, String selfId, Promotion promotion) {
        return start(session, selfId, promotion, session.options().leaseMillis());
    }

    /**
     * Starts watching the backend lease of {@code session}'s cluster for mirror {@code selfId}.
     *
     * @param asyncDelayMillis how long an ASYNC mirror lets an in-sync SYNC mirror go first
     */
    public static FailoverCoordinator start(ClusterSession session, String selfId, Promotion promotion,
            long asyncDelayMillis) {
        if (asyncDelayMillis < 0) {
            throw new IllegalArgumentException("ASYNC promotion delay must not be negative: " + asyncDelayMillis);
        }
        FailoverCoordinator c = new FailoverCoordinator(session, selfId, promotion, asyncDelayMillis);
        c.leaseCache.listenable().addListener(CuratorCacheListener.builder()
                .forDeletes(d -> {
                    c.leaseChanges.incrementAndGet();
                    c.notice("backend lease deleted");
                })
                // a winner quick enough re-creates the znode before this cache re-reads it: a change, not a delete
                .forChanges((before, after) -> c.leaseChanges.incrementAndGet())
                .forInitialized(() -> c.watching = true)
                .build());
        session.curator().getConnectionStateListenable().addListener(c.connectionListener);
        c.leaseCache.start();
        // a mirror that turns IN_SYNC (or a configuration that changes) while no backend holds the lease re-checks
        c.configWatch = session.store().watch(config -> c.notice("configuration epoch " + config.epoch()));
        c.notice("coordinator started");
        return c;
    }

    private void notice(String why) {
        if (closed || report != null) {
            return;
        }
        long nanos = System.nanoTime();
        long millis = System.currentTimeMillis();
        notices.incrementAndGet();
        try {
            executor.execute(() -> {
                if (noticedNanos == 0) {
                    noticedNanos = nanos;
                    noticedMillis = millis;
                    retries = 0;
                }
                LOG.debug("mirror '{}': {}", selfId, why);
                attempt(false);
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("mirror '{}': closed, ignoring {}", selfId, why);
        }
    }

    /** An in-sync SYNC mirror of {@code config} whose liveness lease exists, or null (issue 9, ASYNC promotion). */
    private String liveInSyncSyncMirror(ClusterConfig config) throws Exception {
        for (MirrorInfo m : config.mirrors()) {
            if (m.mode() == ReplicationMode.SYNC && m.inSync()
                    && session.curator().checkExists().forPath(session.paths().mirrorLease(m.id())) != null) {
                return m.id();
            }
        }
        return null;
    }

    private void attempt(boolean asyncDelayDone) {
        if (closed || report != null || brokenPromotion) {
            return;
        }
        long graceLeft = graceUntilNanos - System.nanoTime();
        if (graceLeft > 0) {
            executor.schedule(() -> attempt(asyncDelayDone), graceLeft, TimeUnit.NANOSECONDS);
            return;
        }
        try {
            if (session.curator().checkExists().forPath(session.paths().backendLease()) != null) {
                noticedNanos = 0;
                return;
            }
            Versioned<ClusterConfig> seen = session.store().read();
            ClusterConfig config = seen.value();
            if (config.isBackend(selfId)) {
                // our CAS landed but its reply was lost (or we crashed after it): the epoch is ours to serve
                Lease lease = Lease.tryAcquire(session, session.paths().backendLease(), selfId, null);
                if (lease != null) {
                    resumeHolding(lease, seen);
                }
                return;
            }
            MirrorInfo me = config.mirror(selfId).orElse(null);
            if (me == null) {
                LOG.info("mirror '{}' is not a mirror of epoch {} (backend {}): not promoting", selfId,
                        config.epoch(), config.backend());
                notEligible.incrementAndGet();
                noticedNanos = 0;
                return;
            }
            if (!me.inSync()) {
                LOG.info("mirror '{}' is {} in epoch {}: not eligible for promotion", selfId, me.state(),
                        config.epoch());
                notEligible.incrementAndGet();
                noticedNanos = 0;
                return;
            }
            if (me.mode() == ReplicationMode.ASYNC && !asyncDelayDone && config.mirrors().stream()
                    .anyMatch(m -> m.mode() == ReplicationMode.SYNC && m.inSync())) {
                executor.schedule(() -> attempt(true), asyncDelayMillis, TimeUnit.MILLISECONDS);
                return;
            }
            String liveSync = liveInSyncSyncMirror(config);
            if (me.mode() == ReplicationMode.ASYNC && liveSync != null) {
                // an ASYNC mirror may lack the last acknowledged commits: never promoted while a SYNC one can be
                LOG.info("ASYNC mirror '{}' does not promote: SYNC mirror '{}' is in sync and holds its lease",
                        selfId, liveSync);
                notEligible.incrementAndGet();
                executor.schedule(() -> attempt(true), asyncDelayMillis, TimeUnit.MILLISECONDS);
                return;
            }
            Lease lease = Lease.tryAcquire(session, session.paths().backendLease(), selfId, null);
            if (lease == null) {
                noticedNanos = 0;
                return;
            }
            promoteHolding(lease, seen);
        } catch (AsymNvmException e) {
            if (!closed) {
                LOG.warn("mirror '{}': failover attempt failed: {}", selfId, e.getMessage());
            }
        } catch (Exception e) {
            if (!closed) {
                LOG.warn("mirror '{}': failover attempt failed", selfId, e);
            }
        }
    }

    private void promoteHolding(Lease lease, Versioned<ClusterConfig> seen) {
        boolean committed = false;
        try {
            Versioned<ClusterConfig> now = session.store().read();
            if (now.version() != seen.version()) {
                lease.close();
                retry("the configuration changed from version " + seen.version() + " to " + now.version());
                return;
            }
            long applied = promotion.finishReplay();
            ClusterConfig next = seen.value().promote(selfId);
            if (!session.store().compareAndSet(seen.version(), next)) {
                lease.close();
                retry("lost the configuration compare-and-set at version " + seen.version());
                return;
            }
            committed = true;
            serve(lease, seen.value().epoch(), next, applied, System.nanoTime() - noticedNanos);
        } catch (Exception e) {
            giveUp(lease, committed, e);
        }
    }

    /** The configuration already names this node (a CAS whose reply was lost): finish replay and serve it. */
    private void resumeHolding(Lease lease, Versioned<ClusterConfig> seen) {
        try {
            Versioned<ClusterConfig> now = session.store().read();
            if (now.version() != seen.version()) {
                lease.close();
                retry("the configuration changed from version " + seen.version() + " to " + now.version());
                return;
            }
            long applied = promotion.finishReplay();
            LOG.info("mirror '{}' is named backend of epoch {} already: resuming its promotion", selfId,
                    seen.value().epoch());
            serve(lease, seen.value().epoch() - 1, seen.value(), applied, System.nanoTime() - noticedNanos);
        } catch (Exception e) {
            giveUp(lease, true, e);
        }
    }

    private void serve(Lease lease, long oldEpoch, ClusterConfig next, long applied, long commitNanos)
            throws Exception {
        backendLease = lease; // visible to promote(): it hands the lease to BackendGuard.afterPromotion
        promotion.promote(next.epoch(), next);
        long promoteNanos = System.nanoTime() - noticedNanos;
        report = new FailoverReport(selfId, oldEpoch, next.epoch(), applied, noticedMillis, commitNanos,
                promoteNanos);
        LOG.info("mirror '{}' promoted: epoch {} -> {}, applied txid {}, config committed {} µs and serving {} µs "
                + "after the lease loss was noticed", selfId, oldEpoch, next.epoch(), applied, commitNanos / 1000,
                promoteNanos / 1000);
    }

    /**
     * A promotion step failed: release the lease. A failure before the configuration changed (e.g. replay behind)
     * may be retried on a later notice; a node that could not serve an epoch it was given stops trying, so that
     * the other in-sync mirrors take over at a later epoch instead of racing a broken node.
     */
    private void giveUp(Lease lease, boolean committed, Exception e) {
        backendLease = null;
        lease.close();
        if (committed) {
            brokenPromotion = true;
        }
        LOG.error("mirror '{}': promotion failed {} the configuration was committed; backend lease released{}",
                selfId, committed ? "after" : "before",
                committed ? "; this node stops promoting, another in-sync mirror takes over at a later epoch" : "",
                e);
    }

    private void retry(String why) {
        if (++retries > MAX_RETRIES) {
            LOG.warn("mirror '{}': giving up this failover round after {} retries ({})", selfId, MAX_RETRIES, why);
            noticedNanos = 0;
            return;
        }
        LOG.info("mirror '{}': {}; trying again", selfId, why);
        executor.execute(() -> attempt(false));
    }

    /** The promotion this coordinator made, if any (it makes at most one: the node is then a backend). */
    public Optional<FailoverReport> report() {
        return Optional.ofNullable(report);
    }

    /**
     * During {@link Promotion#promote} and after a promotion, the backend lease this node now holds: hand it to
     * {@link BackendGuard#afterPromotion(ClusterSession, String, ClusterConfig, Lease, BackendGuard.Fence)}.
     */
    public Optional<Lease> backendLease() {
        return Optional.ofNullable(backendLease);
    }

    /** How many times a missing backend lease (or a reconnect) was noticed. */
    public int notices() {
        return notices.get();
    }

    /** True once the backend lease's cache has loaded: from then on every change of the lease is seen. */
    public boolean watching() {
        return watching;
    }

    /** How many deletions or changes of holder of the backend lease this coordinator saw. */
    public int leaseChanges() {
        return leaseChanges.get();
    }

    /** How many attempts stopped because this node was not an in-sync mirror of the configuration. */
    public int notEligible() {
        return notEligible.get();
    }

    public String nodeId() {
        return selfId;
    }

    /** Stops watching (a promoted node's backend lease stays held: it belongs to the backend now). */
    @Override
    public void close() {
        closed = true;
        session.curator().getConnectionStateListenable().removeListener(connectionListener);
        leaseCache.close();
        ClusterStore.Watch w = configWatch;
        if (w != null) {
            w.close();
        }
        ClusterThreads.stop(executor, true);
    }
}
