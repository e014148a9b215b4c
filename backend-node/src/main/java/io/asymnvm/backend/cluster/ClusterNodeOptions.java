package io.asymnvm.backend.cluster;

import io.asymnvm.cluster.ClusterOptions;
import io.asymnvm.cluster.NodeEndpoint;
import picocli.CommandLine.Option;

/**
 * The command-line options of a node on the cluster's ZooKeeper ({@code backend --zk}, {@code mirror --zk}), as a
 * picocli mixin: {@code --zk}, {@code --cluster}, {@code --node-id}, {@code --lease-ms}.
 */
public final class ClusterNodeOptions {
    @Option(names = "--zk", paramLabel = "HOST:PORT,...",
            description = "ZooKeeper of the cluster (issue 9): configuration, leases, failover, fencing by epoch.")
    String zk;

    @Option(names = "--cluster", defaultValue = ClusterOptions.DEFAULT_CLUSTER_NAME,
            description = "Cluster name (with --zk). Default: ${DEFAULT-VALUE}.")
    String clusterName;

    @Option(names = "--node-id", description = "This node's id in the cluster (with --zk), [A-Za-z0-9._-]{1,64}.")
    String nodeId;

    @Option(names = "--lease-ms", defaultValue = "1000",
            description = "Lease (ZooKeeper session timeout) in ms (with --zk). Default: ${DEFAULT-VALUE}.")
    int leaseMillis;

    /** True when the node runs on ZooKeeper ({@code --zk} or {@code --node-id} given). */
    public boolean enabled() {
        return zk != null || nodeId != null;
    }

    /** This node's id, validated; {@code --zk} and {@code --node-id} go together. */
    public String nodeId() {
        if (zk == null || nodeId == null) {
            throw new IllegalArgumentException("--zk and --node-id go together (got --zk " + zk + ", --node-id "
                    + nodeId + ")");
        }
        return NodeEndpoint.requireNodeId("--node-id", nodeId);
    }

    /** The session options, validated (connect string, name, lease). */
    public ClusterOptions options() {
        nodeId();
        return ClusterOptions.of(zk).withClusterName(clusterName).withLeaseMillis(leaseMillis);
    }
}
