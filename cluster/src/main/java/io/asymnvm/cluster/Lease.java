package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A lease held through an ephemeral znode bound to the node's ZooKeeper session (FaRM's leases, kept by ZooKeeper
 * instead of by hand): the lease lasts as long as the session, and the session outlives a silent holder by exactly
 * the session timeout ({@link ClusterOptions#leaseMillis()}). The znode's data is the holder's node id.
 *
 * <h2>States, and what a backend does in each</h2>
 * <ul>
 *   <li>{@link State#HELD}: the znode exists and belongs to this session.
 *   <li>{@link State#SUSPENDED} (Curator SUSPENDED: the connection dropped, the session may still live): nothing is
 *       known. The backend <b>keeps serving its epoch</b>: no mirror can be promoted without ZooKeeper (the config
 *       only changes by a CAS that needs a quorum), and a promoted mirror would fence the old epoch anyway.
 *   <li>{@link State#LOST} (Curator LOST, or the znode vanished: the session expired, or Curator gave it up after
 *       the session timeout without a connection): the lease is gone and a mirror may take it once ZooKeeper is
 *       reachable. When ZooKeeper itself is down no promotion can happen, so the backend still <b>keeps serving its
 *       epoch</b> (issue 9: no promotion without a quorum), and once reconnected it reads the configuration: if it is
 *       still the backend at its epoch it {@link #reclaim()}s the lease, otherwise it stops serving (fenced; it may
 *       rejoin as a mirror). {@link BackendGuard} implements exactly this. Safety does not rest on the old backend
 *       noticing in time: a promoted mirror and the frontends refuse its older epoch.
 *   <li>{@link State#RELEASED}: closed by its holder.
 * </ul>
 *
 * <p>Listeners run on Curator's threads: keep them short and never block on ZooKeeper there.
 */
public final class Lease implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Lease.class);

    /** Where a lease stands; see the class comment for what a holder should do in each. */
    public enum State { HELD, SUSPENDED, LOST, RELEASED }

    /** Told of every state change after acquisition. */
    @FunctionalInterface
    public interface Listener {
        void stateChanged(Lease lease, State state);
    }

    private final CuratorFramework client;
    private final String path;
    private final String holderId;
    private final Listener listener;
    private final ConnectionStateListener connectionListener = (c, s) -> onConnectionState(s);
    private final CuratorWatcher nodeWatcher = this::onNodeEvent;
    private volatile State state = State.LOST;
    private volatile long ownerSession;

    private Lease(CuratorFramework client, String path, String holderId, Listener listener) {
        this.client = client;
        this.path = path;
        this.holderId = NodeEndpoint.requireNodeId("lease holder id", holderId);
        this.listener = listener == null ? (l, s) -> { } : listener;
    }

    /**
     * Takes the lease at {@code path} for {@code holderId}.
     *
     * <p>If the znode is held by another holder, waits up to {@code waitMillis} for it to go (0: fail at once). If
     * it is held by a previous session of the same holder (a restarted node whose old session has not expired yet),
     * that stale znode is replaced atomically (one multi-op: delete at its version, create).
     *
     * @throws AsymNvmException {@link ErrorCode#NOT_PRIMARY} naming the path and the current holder when another
     *     holder keeps it past the wait
     */
    public static Lease acquire(ClusterSession session, String path, String holderId, long waitMillis,
            Listener listener) {
        if (waitMillis < 0) {
            throw new IllegalArgumentException("lease wait must not be negative: " + waitMillis + " ms");
        }
        Lease lease = new Lease(session.curator(), path, holderId, listener);
        lease.client.getConnectionStateListenable().addListener(lease.connectionListener);
        try {
            lease.take(waitMillis);
        } catch (RuntimeException e) {
            lease.client.getConnectionStateListenable().removeListener(lease.connectionListener);
            throw e;
        }
        return lease;
    }

    /**
     * Like {@link #acquire} with no wait, but returns null instead of failing when another holder has the lease.
     */
    public static Lease tryAcquire(ClusterSession session, String path, String holderId, Listener listener) {
        try {
            return acquire(session, path, holderId, 0, listener);
        } catch (AsymNvmException e) {
            if (e.errorCode() == ErrorCode.NOT_PRIMARY) {
                return null;
            }
            throw e;
        }
    }

    private void take(long waitMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        byte[] data = holderId.getBytes(StandardCharsets.UTF_8);
        // bounded: each round either succeeds, fails for good, or waits for a deletion until the deadline
        for (int round = 0; ; round++) {
            try {
                client.create().creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path, data);
                held("acquired");
                return;
            } catch (KeeperException.NodeExistsException e) {
                // examined below
            } catch (Exception e) {
                throw ClusterStore.zkFailure("create the lease " + path, e);
            }
            Stat stat = new Stat();
            String holder;
            try {
                holder = new String(client.getData().storingStatIn(stat).forPath(path), StandardCharsets.UTF_8);
            } catch (KeeperException.NoNodeException e) {
                continue;
            } catch (Exception e) {
                throw ClusterStore.zkFailure("read the lease " + path, e);
            }
            long mySession = currentSession();
            if (stat.getEphemeralOwner() == mySession) {
                held("already held by this session");
                return;
            }
            if (holder.equals(holderId)) {
                if (replaceStale(stat, data)) {
                    held("reclaimed from an earlier session 0x" + Long.toHexString(stat.getEphemeralOwner()));
                    return;
                }
                continue;
            }
            long remaining = deadline - System.nanoTime();
            if (remaining <= 0 || round > 1000) {
                throw new AsymNvmException(ErrorCode.NOT_PRIMARY, "lease " + path + " is held by node '" + holder
                        + "' (session 0x" + Long.toHexString(stat.getEphemeralOwner()) + "), not by '" + holderId
                        + "'" + (waitMillis > 0 ? " after waiting " + waitMillis + " ms" : ""));
            }
            awaitDeletion(remaining);
        }
    }

    private boolean replaceStale(Stat stale, byte[] data) {
        try {
            client.transaction().forOperations(
                    client.transactionOp().delete().withVersion(stale.getVersion()).forPath(path),
                    client.transactionOp().create().withMode(CreateMode.EPHEMERAL).forPath(path, data));
            return true;
        } catch (KeeperException.NoNodeException | KeeperException.BadVersionException
                | KeeperException.NodeExistsException e) {
            return false;
        } catch (Exception e) {
            throw ClusterStore.zkFailure("replace the stale lease " + path, e);
        }
    }

    private void awaitDeletion(long remainingNanos) {
        CountDownLatch gone = new CountDownLatch(1);
        try {
            Stat s = client.checkExists().usingWatcher((CuratorWatcher) e -> gone.countDown()).forPath(path);
            if (s != null) {
                gone.await(remainingNanos, TimeUnit.NANOSECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AsymNvmException(ErrorCode.TIMEOUT, "interrupted while waiting for the lease " + path);
        } catch (Exception e) {
            throw ClusterStore.zkFailure("watch the lease " + path, e);
        }
    }

    private void held(String how) {
        ownerSession = currentSession();
        state = State.HELD;
        LOG.info("lease {} held by '{}' (session 0x{}): {}", path, holderId, Long.toHexString(ownerSession), how);
        armWatch();
    }

    private void armWatch() {
        try {
            if (client.checkExists().usingWatcher(nodeWatcher).forPath(path) == null) {
                change(State.LOST, "znode gone");
            }
        } catch (Exception e) {
            LOG.warn("cannot watch lease {}: {}", path, e.toString());
        }
    }

    private void onNodeEvent(WatchedEvent event) {
        if (state == State.RELEASED) {
            return;
        }
        if (event.getType() == Watcher.Event.EventType.NodeDeleted) {
            change(State.LOST, "znode deleted");
        } else if (event.getType() != Watcher.Event.EventType.None && state == State.HELD) {
            armWatch();
        }
    }

    private void onConnectionState(ConnectionState s) {
        State now = state;
        if (now == State.RELEASED) {
            return;
        }
        switch (s) {
            case SUSPENDED -> {
                if (now == State.HELD) {
                    change(State.SUSPENDED, "connection to ZooKeeper suspended");
                }
            }
            case LOST -> {
                if (now == State.HELD || now == State.SUSPENDED) {
                    change(State.LOST, "ZooKeeper session lost");
                }
            }
            case RECONNECTED -> {
                if (now == State.SUSPENDED) {
                    if (ownedBySession()) {
                        change(State.HELD, "reconnected within the session");
                        armWatch();
                    } else {
                        change(State.LOST, "reconnected, but the lease is no longer this session's");
                    }
                }
            }
            default -> {
            }
        }
    }

    private synchronized void change(State next, String why) {
        if (state == next || state == State.RELEASED) {
            return;
        }
        state = next;
        LOG.info("lease {} of '{}' is {}: {}", path, holderId, next, why);
        try {
            listener.stateChanged(this, next);
        } catch (RuntimeException e) {
            LOG.error("lease listener of {} failed", path, e);
        }
    }

    private boolean ownedBySession() {
        try {
            Stat s = client.checkExists().forPath(path);
            return s != null && s.getEphemeralOwner() == currentSession();
        } catch (Exception e) {
            return false;
        }
    }

    private long currentSession() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw ClusterStore.zkFailure("read the session id", e);
        }
    }

    /**
     * Takes the lease again after it was {@link State#LOST} (the holder decided it may: e.g. the configuration still
     * names it backend at its epoch). Replaces its own stale znode; fails if another holder has taken the lease.
     *
     * @throws AsymNvmException {@link ErrorCode#NOT_PRIMARY} naming the current holder
     */
    public synchronized void reclaim() {
        if (state == State.RELEASED) {
            throw new IllegalStateException("lease " + path + " was released");
        }
        if (state == State.HELD) {
            return;
        }
        take(0);
        listener.stateChanged(this, State.HELD);
    }

    /** True while the znode exists and belongs to this node's current session, as far as this node knows. */
    public boolean isHeld() {
        return state == State.HELD;
    }

    public State state() {
        return state;
    }

    public String path() {
        return path;
    }

    public String holderId() {
        return holderId;
    }

    /** Releases the lease: its znode is deleted at once if this session still owns it. */
    @Override
    public void close() {
        synchronized (this) {
            if (state == State.RELEASED) {
                return;
            }
            state = State.RELEASED;
        }
        client.getConnectionStateListenable().removeListener(connectionListener);
        try {
            Stat s = client.checkExists().forPath(path);
            if (s != null && s.getEphemeralOwner() == currentSession()) {
                client.delete().withVersion(s.getVersion()).forPath(path);
            }
        } catch (Exception e) {
            LOG.debug("lease {} not deleted on release (it goes with the session): {}", path, e.toString());
        }
        LOG.info("lease {} released by '{}'", path, holderId);
    }
}
