package io.asymnvm.cluster;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How a node reaches the cluster's ZooKeeper: the connect string, the cluster name (its znodes live under
 * {@code /asymnvm/<name>}), the lease (= ZooKeeper session timeout) and how long to wait for the first connection.
 * Validated completely at construction.
 *
 * @param connectString ZooKeeper's {@code host:port[,host:port...]}
 * @param clusterName names the cluster's root znode, {@code [A-Za-z0-9._-]{1,64}}
 * @param leaseMillis the session timeout, and so the lease of every node; ZooKeeper clamps it to its
 *     [2, 20] ticks (the embedded server allows up to 60 s)
 * @param connectTimeoutMillis how long {@link ClusterSession#connect} waits for ZooKeeper before it fails
 */
public record ClusterOptions(String connectString, String clusterName, int leaseMillis, int connectTimeoutMillis) {
    /** Default lease: short enough for a failover under 2 s (lease + detection + promotion). */
    public static final int DEFAULT_LEASE_MILLIS = 1000;
    public static final int DEFAULT_CONNECT_TIMEOUT_MILLIS = 5000;
    public static final String DEFAULT_CLUSTER_NAME = "default";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern CONNECT = Pattern.compile("[^,\\s:]+:\\d{1,5}(,[^,\\s:]+:\\d{1,5})*(/[^\\s]*)?");

    public ClusterOptions {
        Objects.requireNonNull(connectString, "connectString");
        if (!CONNECT.matcher(connectString).matches()) {
            throw new IllegalArgumentException("ZooKeeper connect string not of the form host:port[,host:port...]: '"
                    + connectString + "'");
        }
        if (clusterName == null || !NAME.matcher(clusterName).matches() || clusterName.equals(".")
                || clusterName.equals("..")) {
            throw new IllegalArgumentException("cluster name must match " + NAME.pattern() + ": '" + clusterName + "'");
        }
        if (leaseMillis < 20 || leaseMillis > 600_000) {
            throw new IllegalArgumentException("lease out of range [20, 600000] ms: " + leaseMillis);
        }
        if (connectTimeoutMillis < 1 || connectTimeoutMillis > 600_000) {
            throw new IllegalArgumentException("ZooKeeper connect timeout out of range [1, 600000] ms: "
                    + connectTimeoutMillis);
        }
    }

    /** The defaults for a connect string: cluster {@value #DEFAULT_CLUSTER_NAME}, 1 s lease, 5 s connect timeout. */
    public static ClusterOptions of(String connectString) {
        return new ClusterOptions(connectString, DEFAULT_CLUSTER_NAME, DEFAULT_LEASE_MILLIS,
                DEFAULT_CONNECT_TIMEOUT_MILLIS);
    }

    public ClusterOptions withClusterName(String name) {
        return new ClusterOptions(connectString, name, leaseMillis, connectTimeoutMillis);
    }

    public ClusterOptions withLeaseMillis(int millis) {
        return new ClusterOptions(connectString, clusterName, millis, connectTimeoutMillis);
    }

    public ClusterOptions withConnectTimeoutMillis(int millis) {
        return new ClusterOptions(connectString, clusterName, leaseMillis, millis);
    }
}
