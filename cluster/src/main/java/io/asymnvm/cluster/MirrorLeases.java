package io.asymnvm.cluster;

import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import org.apache.curator.framework.recipes.cache.ChildData;

/**
 * Which mirrors are alive: each mirror process holds an ephemeral lease {@code leases/mirror-<id>} on its session
 * ({@link #hold}), and the backend watches the set ({@link #watch}). A SYNC mirror whose lease lapsed is the
 * backend's cue to take it out of the in-sync set through the configuration (e.g.
 * {@code store.update(c -> c.withMirrorState(id, CATCHING_UP), n)}) before acknowledging commits without it (issue 9,
 * item 6: the policy itself lives with the backend).
 */
public final class MirrorLeases implements AutoCloseable {
    private static final String PREFIX = "mirror-";

    private final ReloadingCache cache;
    private final String leases;

    private MirrorLeases(ClusterSession session, String leases, Consumer<Set<String>> onChange) {
        this.leases = leases;
        this.cache = new ReloadingCache(session.curator(), leases, () -> onChange.accept(live()));
    }

    /** Takes mirror {@code mirrorId}'s liveness lease (waiting up to one lease for an earlier holder to go). */
    public static Lease hold(ClusterSession session, String mirrorId, Lease.Listener listener) {
        return Lease.acquire(session, session.paths().mirrorLease(mirrorId), mirrorId,
                session.options().leaseMillis(), listener);
    }

    /**
     * Watches the live mirrors; {@code onChange} gets the whole set (sorted ids) after every change, on a Curator
     * thread. After each reconnection to ZooKeeper the set is read afresh ({@link ReloadingCache}), so a read that
     * failed with the connection does not leave it stale.
     */
    public static MirrorLeases watch(ClusterSession session, Consumer<Set<String>> onChange) {
        String leases = session.paths().leases();
        MirrorLeases m = new MirrorLeases(session, leases, onChange);
        m.cache.start();
        return m;
    }

    /** How many times the set has been read afresh after a reconnection (for tests and diagnostics). */
    long reloads() {
        return cache.reloads();
    }

    /** The ids of the mirrors holding a lease now, as this watcher last saw them. */
    public Set<String> live() {
        Set<String> ids = new TreeSet<>();
        cache.stream().map(ChildData::getPath).forEach(p -> {
            String name = p.substring(p.lastIndexOf('/') + 1);
            if (p.startsWith(leases + "/") && name.startsWith(PREFIX)) {
                ids.add(name.substring(PREFIX.length()));
            }
        });
        return ids;
    }

    @Override
    public void close() {
        cache.close();
    }
}
