package io.asymnvm.backend;

import io.asymnvm.backend.cluster.ClusterBackend;
import io.asymnvm.backend.cluster.ClusterNodeOptions;
import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.ClusterSession;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code asymnvm backend --zk ... --node-id ID}: the backend process on the cluster's ZooKeeper (see
 * {@link ClusterBackend}). Prints {@code LISTENING host:port} once it serves, and {@code FENCED reason} (then
 * exits with status {@value #FENCED_EXIT}) if the cluster moved to a newer epoch while it ran. A replaced backend
 * is refused at start with {@code STALE_EPOCH} and never binds its port.
 */
final class ClusterBackendMain {
    /** Exit status of a backend fenced by a newer configuration. */
    static final int FENCED_EXIT = 3;

    private ClusterBackendMain() {
    }

    static int run(BackendMain options, ClusterNodeOptions cluster) throws InterruptedException {
        ClusterOptions clusterOptions = cluster.options();
        String nodeId = cluster.nodeId();
        if (!"tcp".equalsIgnoreCase(options.fabric.trim())) {
            throw new IllegalArgumentException("--fabric " + options.fabric + " with --zk: a cluster's nodes serve tcp");
        }
        BackendConfiguration config = options.configuration(); // validated before ZooKeeper or anything is bound
        ClusterSession session = ClusterSession.connect(clusterOptions);
        CountDownLatch stopped = new CountDownLatch(1);
        AtomicInteger status = new AtomicInteger();
        ClusterBackend backend;
        try {
            backend = ClusterBackend.start(session, nodeId, config, options.host, (current, reason) -> {
                System.out.println("FENCED " + reason);
                System.out.flush();
                status.set(FENCED_EXIT);
                stopped.countDown();
            });
        } catch (RuntimeException e) {
            session.close();
            throw e;
        }
        BackendNode node = backend.node();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stopped.countDown();
            backend.close();
            node.close();
            session.close();
        }, "asymnvm-backend-shutdown"));
        System.out.println("LISTENING " + options.host + ":" + node.port());
        System.out.println("EPOCH " + backend.guard().epoch());
        System.out.flush();
        stopped.await();
        if (status.get() == FENCED_EXIT) {
            System.exit(FENCED_EXIT); // the shutdown hook stops the node: it answers nothing from now on
        }
        return status.get();
    }
}
