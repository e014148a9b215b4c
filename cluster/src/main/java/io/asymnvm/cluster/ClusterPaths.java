package io.asymnvm.cluster;

/**
 * The znodes of one cluster, all under {@code /asymnvm/<name>}:
 *
 * <pre>
 * /asymnvm/&lt;name&gt;/config                 persistent: the {@link ClusterConfig} JSON, changed only by versioned CAS
 * /asymnvm/&lt;name&gt;/leases/backend         ephemeral: held by the serving backend's session (data: its node id)
 * /asymnvm/&lt;name&gt;/leases/mirror-&lt;id&gt;     ephemeral: held by each live mirror's session
 * </pre>
 */
public record ClusterPaths(String root) {
    public static final String BASE = "/asymnvm";

    public static ClusterPaths of(String clusterName) {
        return new ClusterPaths(BASE + "/" + clusterName);
    }

    public String config() {
        return root + "/config";
    }

    public String leases() {
        return root + "/leases";
    }

    public String backendLease() {
        return leases() + "/backend";
    }

    public String mirrorLease(String mirrorId) {
        return leases() + "/mirror-" + NodeEndpoint.requireNodeId("mirror id", mirrorId);
    }
}
