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
 *   <li>A SYNC mirror this frontend posts to that the configuration no longer lists as a SYNC mirror (the backend
 *       dropped it after its lease lapsed) is dropped with {@link AsymNvm#dropMirror}. Until then commits wait for
 *       it: a SYNC mirror is never skipped silently. One set back to catching up stays: it is still posted to.
 *   <li>A new backend epoch needs nothing here: the configuration's new backend is one of this frontend's SYNC
 *       mirrors (only an in-sync mirror is promoted), which the engine's failover path re-attaches until one
 *       answers as the backend of a newer epoch. The configuration's backend is therefore never dropped.
 *   <li>A SYNC mirror the configuration lists (catching up or in sync) that this frontend does not post to yet is
 *       added with {@link AsymNvm#addMirror(String)}: its retained records are re-posted there and every later
 *       commit waits for it too, and the frontend declares it SYNC to the mirror, which needs that declaration from
 *       every frontend attached to its backend before it reports in sync (issue 9, a mirror joining while
 *       frontends run). Symmetrically, one that the configuration no longer lists is dropped.
 *   <li>An ASYNC mirror (watched, never posted to) is dropped the same way when the configuration stops listing it
 *       in sync (e.g. past its lag bound): from then on ring space is no longer held for it.
 * </ul>
 * Watch calls arrive on a Curator thread and are applied on this follower's own thread (an add attaches and
 * FLUSHes); {@link #close()} ends the watch, that thread and the ZooKeeper session.
 */
final class ClusterFollower implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterFollower.class);

    private final ClusterSession session;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();
    private volatile ClusterStore.Watch watch;
    /** How soon a mirror that could not be added is tried again (its joining waits for this frontend's add). */
    static final long ADD_RETRY_MILLIS = 200;
    /** The newest configuration seen (applied again while an add is pending). */
    private volatile ClusterConfig latest;
    /** Whether a retry is scheduled (one at a time, however many mirrors are pending). */
    private final java.util.concurrent.atomic.AtomicBoolean retryScheduled =
            new java.util.concurrent.atomic.AtomicBoolean();
    private final java.util.concurrent.ScheduledExecutorService applier =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "asymnvm-cluster-follower");
                t.setDaemon(true);
                return t;
            });

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

    /** Every SYNC mirror the configuration lists, catching up or in sync, as {@code host:port}. */
    static List<String> listedSyncMirrors(ClusterConfig c) {
        return c.mirrors().stream().filter(m -> m.mode() == ReplicationMode.SYNC)
                .map(m -> m.node().address()).toList();
    }

    void follow(AsymNvm nvm) {
        watch = session.store().watch(c -> {
            latest = c;
            try {
                applier.execute(() -> apply(nvm, c));
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                // the follower closed
            }
        });
    }

    private void apply(AsymNvm nvm, ClusterConfig c) {
        List<String> listed = new java.util.ArrayList<>(listedSyncMirrors(c));
        listed.addAll(asyncMirrors(c)); // an ASYNC mirror past its lag bound is CATCHING_UP: dropped, ring released
        String backend = c.backend().address();
        for (String m : nvm.mirrors()) {
            if (!m.equals(backend) && !listed.contains(m)) {
                try {
                    nvm.dropMirror(m);
                    LOG.warn("frontend {}: SYNC mirror {} left the configuration of epoch {}: dropped",
                            nvm.frontendId(), m, c.epoch());
                } catch (RuntimeException e) {
                    if (!nvm.mirrors().contains(m)) {
                        LOG.debug("frontend {}: mirror {} already gone: {}", nvm.frontendId(), m, e.getMessage());
                    } else {
                        // the backend could not be told (it must be, before a commit is acknowledged without the
                        // mirror): commits keep waiting for it; try again soon
                        LOG.warn("frontend {}: SYNC mirror {} could not be dropped yet ({}); retried every {} ms",
                                nvm.frontendId(), m, e.getMessage(), ADD_RETRY_MILLIS);
                        retryLater(nvm);
                    }
                }
            }
        }
        for (MirrorInfo m : c.mirrors()) {
            String a = m.node().address();
            // SYNC only: an ASYNC mirror is never posted to, and one that joins later is not watched (reconnect)
            if (m.mode() == ReplicationMode.SYNC && !a.equals(backend) && !nvm.mirrors().contains(a)) {
                try {
                    nvm.addMirror(a);
                    warned.remove(a);
                    LOG.info("frontend {}: SYNC mirror {} ({}) of epoch {} added", nvm.frontendId(), m.node(),
                            m.inSync() ? "in sync" : "catching up", c.epoch());
                } catch (RuntimeException e) {
                    if (warned.add(a)) {
                        LOG.warn("frontend {}: SYNC mirror {} could not be added yet ({}); retried every {} ms",
                                nvm.frontendId(), m.node(), e.getMessage(), ADD_RETRY_MILLIS);
                    }
                    // The mirror turns in sync (and so the configuration changes) only once this frontend added
                    // and declared it: waiting for the next change would wait forever. Try again soon, on the
                    // newest configuration (which may no longer list it).
                    retryLater(nvm);
                }
            }
        }
    }

    private void retryLater(AsymNvm nvm) {
        if (!retryScheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            applier.schedule(() -> {
                retryScheduled.set(false);
                ClusterConfig c = latest;
                if (c != null) {
                    apply(nvm, c);
                }
            }, ADD_RETRY_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            // the follower closed
        }
    }

    @Override
    public void close() {
        ClusterStore.Watch w = watch;
        if (w != null) {
            w.close();
        }
        applier.shutdownNow();
        session.close();
    }
}
