package io.asymnvm.examples.drill;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.EmbeddedZooKeeper;
import io.asymnvm.cluster.NodeEndpoint;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ControlMessageLayout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * The ZooKeeper side of a permanent-loss drill ({@code drill --kill backend --permanent}): an embedded ZooKeeper in
 * the drill's JVM, a session that watches the cluster configuration, and the checks the drill waits on (the
 * promoted mirror named backend, a fresh mirror in sync, the backend's shipper without lag).
 */
final class DrillCluster implements AutoCloseable {
    static final String NAME = "drill";
    private static final long LAG_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final EmbeddedZooKeeper zk;
    private final ClusterSession session;
    private final LinkedBlockingQueue<ClusterConfig> changes = new LinkedBlockingQueue<>();
    private final AutoCloseable watch;

    private DrillCluster(EmbeddedZooKeeper zk, ClusterSession session) {
        this.zk = zk;
        this.session = session;
        this.watch = session.store().watch(changes::add);
    }

    // ---- ZooKeeper in a child process (drill --kill zookeeper) ----

    /** Connects to a ZooKeeper this JVM does not run (the drill's {@code drill-zookeeper} child). */
    static DrillCluster connect(String connectString, int leaseMillis) {
        return new DrillCluster(null, ClusterSession.connect(ClusterOptions.of(connectString)
                .withClusterName(NAME).withLeaseMillis(leaseMillis)));
    }

    /**
     * After ZooKeeper came back: waits until this session reads the configuration again (Curator reconnects by
     * itself; reads fail until then).
     */
    ClusterConfig awaitReachable(long deadlineNanos) {
        while (true) {
            try {
                return current();
            } catch (RuntimeException e) {
                if (System.nanoTime() - deadlineNanos > 0) {
                    throw new DrillFailure("ZooKeeper at " + connectString() + " not readable again before the "
                            + "deadline: " + e.getMessage());
                }
                LockSupport.parkNanos(LAG_POLL_NANOS); // Curator's reconnection has no listener we hold: polled
            }
        }
    }

    /**
     * A node's role and epoch as it reports them itself (its {@code STATUS} control call, no ZooKeeper involved):
     * {@code "mirror 3"} or {@code "backend 4"}; null if it does not answer.
     */
    static String roleOf(NodeEndpoint node) {
        try {
            JsonNode status = status(node);
            return status.path("role").asText() + " " + status.path("epoch").asLong();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static JsonNode status(NodeEndpoint node) {
        try (TcpFabric fabric = new TcpFabric(node.host(), node.port()); FabricConnection c = fabric.connect()) {
            byte[] reply = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, -1, 0)).await()
                    .bytes();
            return new ObjectMapper().readTree(new String(reply, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static DrillCluster start(Path dir, int leaseMillis) {
        EmbeddedZooKeeper zk = EmbeddedZooKeeper.start(dir);
        try {
            return new DrillCluster(zk, ClusterSession.connect(ClusterOptions.of(zk.connectString())
                    .withClusterName(NAME).withLeaseMillis(leaseMillis)));
        } catch (RuntimeException e) {
            zk.close();
            throw e;
        }
    }

    String connectString() {
        return session.options().connectString();
    }

    ClusterConfig current() {
        return session.store().read().value();
    }

    /** The configuration znode's version (every change of the record increments it). */
    long version() {
        return session.store().read().version();
    }

    /** When the configuration last changed: its znode's mtime (wall clock of ZooKeeper, here this JVM). */
    long configChangedMillis() {
        try {
            return session.curator().checkExists().forPath(session.paths().config()).getMtime();
        } catch (Exception e) {
            throw new DrillFailure("cannot read the configuration's mtime: " + e);
        }
    }

    /** Waits until the configuration satisfies {@code condition}; returns it. */
    ClusterConfig await(Predicate<ClusterConfig> condition, String what, long deadlineNanos) {
        ClusterConfig c = session.store().readIfPresent().map(v -> v.value()).orElse(null);
        while (c == null || !condition.test(c)) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new DrillFailure("the cluster configuration did not reach '" + what + "' before the "
                        + "deadline; it is " + c);
            }
            try {
                ClusterConfig next = changes.poll(left, TimeUnit.NANOSECONDS);
                c = next != null ? next : c;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new DrillFailure("interrupted waiting for '" + what + "'");
            }
        }
        return c;
    }

    /**
     * Waits until the backend's shippers to the configuration's mirrors report no lag (every mirror applied what
     * the backend applied): a frontend that reconnects to include a mirror then loses nothing if the backend dies
     * right after.
     */
    void awaitNoLag(NodeEndpoint backend, long deadlineNanos) {
        ObjectMapper json = new ObjectMapper();
        try (TcpFabric fabric = new TcpFabric(backend.host(), backend.port())) {
            while (true) {
                JsonNode status;
                try (FabricConnection c = fabric.connect()) {
                    byte[] reply = c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_STATUS, -1, 0))
                            .await().bytes();
                    status = json.readTree(new String(reply, StandardCharsets.UTF_8));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                java.util.List<String> listed = current().mirrors().stream().map(m -> m.node().address()).toList();
                int caughtUp = 0;
                for (JsonNode m : status.path("mirrors")) { // a dropped mirror's shipper may linger: not counted
                    if (listed.contains(m.path("mirror").asText()) && "streaming".equals(m.path("phase").asText())
                            && m.path("max_lag_tx").asLong() == 0) {
                        caughtUp++;
                    }
                }
                if (!listed.isEmpty() && caughtUp == listed.size()) {
                    return;
                }
                if (System.nanoTime() > deadlineNanos) {
                    throw new DrillFailure("the mirrors of backend " + backend + " did not catch up before the "
                            + "deadline: " + status.path("mirrors"));
                }
                LockSupport.parkNanos(LAG_POLL_NANOS); // a shipper's lag has no listener: polled
            }
        }
    }

    @Override
    public void close() {
        try {
            watch.close();
        } catch (Exception e) {
            // closing anyway
        }
        session.close();
        if (zk != null) {
            zk.close();
        }
    }
}
