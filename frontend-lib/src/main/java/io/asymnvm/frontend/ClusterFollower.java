package io.asymnvm.frontend;

import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.ClusterStore;
import io.asymnvm.cluster.MirrorInfo;
import io.asymnvm.cluster.ReplicationMode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A frontend following the cluster configuration (issue 9; {@link AsymNvm#connectCluster}). Policy:
 * <ul>
 *   <li>A SYNC mirror this frontend posts to that the configuration no longer lists as an in-sync SYNC mirror (the
 *       backend dropped it after its lease lapsed, or set it back to catching up) is dropped with
 *       {@link AsymNvm#dropMirror}. Until then commits wait for it: a SYNC mirror is never skipped silently.
 *   <li>A new backend epoch needs nothing here: the configuration's new backend is one of this frontend's SYNC
 *       or watched ASYNC mirrors (only an in-sync mirror is promoted), which the engine's failover path re-attaches
 *       until one answers as the backend of a newer epoch. The configuration's backend is therefore never dropped.
 *   <li>An ASYNC mirror (watched, never posted to) is dropped the same way when the configuration stops listing it
 *       in sync (e.g. past its lag bound): from then on ring space is no longer held for it.
 *   <li>A mirror that became in sync after this frontend connected is not posted to (logged once): it covers the
 *       frontends that connect after it. Reconnect (close, then {@code connectCluster}) to include it.
 * </ul>
 * Watch calls arrive on a Curator thread; {@link #close()} ends the watch and the ZooKeeper session.
 */
final class ClusterFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterFollower.class);

    private final ClusterSession session;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private volatile ClusterStore.Watch watch;

    ClusterFollower(ClusterSession session) {
        this.session = session;
    }

    /** The SYNC mirrors the configuration lists in sync, as {@code host:port}. */
    static List<String> syncMirrors(ClusterConfig c) {
        return c.mirrors().stream().filter(m -> m.mode() == ReplicationMode.SYNC && m.inSync())
                .map(m -> m.node().address()).toList();
    }

    /** The ASYNC mirrors the configuration lists in sync, as {@code host:port} (watched, never posted to). */
    static List<String> asyncMirrors(ClusterConfig c) {
        return c.mirrors().stream().filter(m -> m.mode() == ReplicationMode.ASYNC && m.inSync())
                .map(m -> m.node().address()).toList();
    }

    void follow(AsymNvm nvm) {
        watch = session.store().watch(c -> apply(nvm, c));
    }

    private void apply(AsymNvm nvm, ClusterConfig c) {
        List<String> inSync = syncMirrors(c);
        List<String> keep = new java.util.ArrayList<>(inSync);
        keep.addAll(asyncMirrors(c)); // an ASYNC mirror past its lag bound is CATCHING_UP: dropped, ring released
        String backend = c.backend().address();
        for (String m : nvm.mirrors()) {
            if (!m.equals(backend) && !keep.contains(m)) {
                try {
                    nvm.dropMirror(m);
                    LOG.warn("frontend {}: SYNC mirror {} left the in-sync set of epoch {}: dropped",
                            nvm.frontendId(), m, c.epoch());
                } catch (RuntimeException e) {
                    LOG.debug("frontend {}: mirror {} already gone: {}", nvm.frontendId(), m, e.getMessage());
                }
            }
        }
        for (MirrorInfo m : c.mirrors()) {
            String a = m.node().address();
            if (inSync.contains(a) && !nvm.mirrors().contains(a) && !a.equals(backend) && warned.add(a)) {
                LOG.info("frontend {}: mirror {} is in sync since this frontend connected; reconnect to post to it",
                        nvm.frontendId(), m.node());
            }
        }
    }

    @Override
    public void close() {
        ClusterStore.Watch w = watch;
        if (w != null) {
            w.close();
        }
        session.close();
    }
}
