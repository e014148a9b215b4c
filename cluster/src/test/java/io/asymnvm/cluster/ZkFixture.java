package io.asymnvm.cluster;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.apache.zookeeper.ZooKeeper;

/** An embedded ZooKeeper with a short tick for tests, and the sessions opened against it (closed with it). */
final class ZkFixture implements AutoCloseable {
    /** Lease used by the tests: the default (1 s); shorter leases expire spuriously on a loaded 2-core machine. */
    static final int LEASE_MILLIS = ClusterOptions.DEFAULT_LEASE_MILLIS;
    static final int TICK_MILLIS = 50;
    static final UUID IMAGE = UUID.fromString("00000000-0000-4000-8000-0000000000a1");
    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    final Path dir;
    EmbeddedZooKeeper zk;
    private final List<ClusterSession> sessions = new ArrayList<>();

    ZkFixture(Path dir) {
        this.dir = dir;
        this.zk = EmbeddedZooKeeper.start(dir, "127.0.0.1", 0, TICK_MILLIS);
    }

    static String freshClusterName() {
        return "c" + CLUSTERS.incrementAndGet();
    }

    ClusterOptions options(String cluster) {
        return ClusterOptions.of(zk.connectString()).withClusterName(cluster).withLeaseMillis(LEASE_MILLIS);
    }

    synchronized ClusterSession session(String cluster) {
        ClusterSession s = ClusterSession.connect(options(cluster));
        sessions.add(s);
        return s;
    }

    /** A session of {@code cluster} with a lease of {@code leaseMillis} (the session timeout). */
    synchronized ClusterSession session(String cluster, int leaseMillis) {
        ClusterSession s = ClusterSession.connect(options(cluster).withLeaseMillis(leaseMillis));
        sessions.add(s);
        return s;
    }

    /** Stops the server (clients see the connection drop). */
    void stop() {
        zk.close();
    }

    /** Starts the server again on the same directory and port. */
    void restart() {
        zk = EmbeddedZooKeeper.start(dir, "127.0.0.1", zk.port(), TICK_MILLIS);
    }

    /**
     * Simulates the death of the node behind {@code s} (kill -9, or a cut cable): its connection is dropped without
     * closing the session, and the client stops, so ZooKeeper expires the session after its timeout and deletes its
     * ephemeral znodes then, not at once.
     */
    static void kill(ClusterSession s) throws Exception {
        cut(s);
        s.close();
    }

    /**
     * Cuts the connection of {@code s} without closing its session: the server expires the session after its timeout;
     * the client itself sees its session end at once (Curator LOST) and carries on with a new session.
     */
    static void cut(ClusterSession s) throws Exception {
        ZooKeeper zk = s.curator().getZookeeperClient().getZooKeeper();
        zk.getTestable().injectSessionExpiration();
    }

    /** Waits for {@code condition}, polling, at most {@code millis}; returns whether it held. */
    static boolean await(BooleanSupplier condition, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < deadline) {
            if (condition.getAsBoolean()) {
                return true;
            }
            Thread.sleep(10);
        }
        return condition.getAsBoolean();
    }

    static ClusterConfig config(String backend, MirrorInfo... mirrors) {
        return new ClusterConfig(1, IMAGE, new NodeEndpoint(backend, "127.0.0.1", 7000), List.of(mirrors));
    }

    static MirrorInfo mirror(String id, int port, ReplicationMode mode, MirrorState state) {
        return new MirrorInfo(new NodeEndpoint(id, "127.0.0.1", port), mode, state);
    }

    /** Closes every session opened so far (the server keeps running). */
    synchronized void closeSessions() {
        for (ClusterSession s : sessions) {
            try {
                s.close();
            } catch (RuntimeException e) {
                // already closed or killed
            }
        }
        sessions.clear();
    }

    @Override
    public synchronized void close() {
        closeSessions();
        zk.close();
    }
}
