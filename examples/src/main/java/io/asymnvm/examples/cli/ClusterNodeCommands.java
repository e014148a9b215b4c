package io.asymnvm.examples.cli;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.cluster.ClusterNodeOptions;
import io.asymnvm.cluster.ClusterConfig;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;
import io.asymnvm.cluster.MirrorInfo;
import io.asymnvm.mirror.ClusterMirror;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/** The {@code --zk} forms of {@code mirror} and {@code status} (issue 9; README "Running a cluster"). */
final class ClusterNodeCommands {
    /** Exit status of a node fenced by a newer configuration (as {@code backend --zk}). */
    static final int FENCED_EXIT = 3;

    private ClusterNodeCommands() {
    }

    /** {@code mirror --zk ... --node-id ID}: runs until SIGTERM; prints LISTENING, then PROMOTED / FENCED. */
    static int mirror(BackendConfiguration config, String host, ClusterNodeOptions node,
                      io.asymnvm.cluster.ReplicationMode mode) throws InterruptedException {
        ClusterOptions options = node.options();
        String nodeId = node.nodeId();
        ClusterSession session = ClusterSession.connect(options);
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicInteger status = new AtomicInteger();
        ClusterMirror mirror;
        try {
            mirror = ClusterMirror.start(session, nodeId, config, host, (current, reason) -> {
                System.out.println("FENCED " + reason);
                System.out.flush();
                status.set(FENCED_EXIT);
                stopped.countDown();
            }, mode);
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopped.countDown();
            mirror.close();
            session.close();
        }, "asymnvm-mirror-shutdown"));
        System.out.println("LISTENING " + host + ":" + mirror.port());
        System.out.flush();
        stopped.await();
        if (status.get() == FENCED_EXIT) {
            System.exit(FENCED_EXIT);
        }
        return 0;
    }

    /** {@code status --zk ...}: the configuration record (epoch, backend, each mirror's mode and state). */
    static int status(String zk, String clusterName, boolean json, PrintWriter out) {
        try (ClusterSession session = ClusterSession.connect(ClusterOptions.of(zk).withClusterName(clusterName))) {
            var v = session.store().read();
            ClusterConfig c = v.value();
            if (json) {
                out.println(new String(c.toJson(), StandardCharsets.UTF_8));
            } else {
                out.printf("cluster %s (version %d): epoch %d, image %s, backend %s%n", clusterName, v.version(),
                        c.epoch(), c.imageId(), c.backend());
                for (MirrorInfo m : c.mirrors()) {
                    out.printf("mirror %s: %s, %s%n", m.node(), m.mode(), m.state());
                }
            }
            out.flush();
            return 0;
        }
    }
}
