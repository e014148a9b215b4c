package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * One node's connection to the cluster's ZooKeeper: a started Curator client whose session timeout is the node's
 * lease, plus the cluster's {@link ClusterPaths} and {@link ClusterStore}. Everything a node holds in the cluster
 * (leases, caches, the failover coordinator, the backend guard) is bound to this session; closing it ends them
 * (ephemeral nodes are deleted at once, not after the timeout).
 *
 * <p>Thread-safe; one per process is the normal use.
 */
public final class ClusterSession implements AutoCloseable {
    /** Retries of one ZooKeeper operation while the connection is down: 4 tries over about 1.5 s. */
    private static final int RETRY_BASE_MILLIS = 100;
    private static final int RETRIES = 3;

    private final ClusterOptions options;
    private final CuratorFramework client;
    private final ClusterPaths paths;
    private final ClusterStore store;

    private ClusterSession(ClusterOptions options, CuratorFramework client) {
        this.options = options;
        this.client = client;
        this.paths = ClusterPaths.of(options.clusterName());
        this.store = new ClusterStore(client, paths);
    }

    /**
     * Connects and waits for the first session.
     *
     * @throws AsymNvmException {@link ErrorCode#TIMEOUT} naming the connect string and the timeout when ZooKeeper
     *     cannot be reached in {@link ClusterOptions#connectTimeoutMillis()}
     */
    public static ClusterSession connect(ClusterOptions options) {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(options.connectString())
                .sessionTimeoutMs(options.leaseMillis())
                .connectionTimeoutMs(Math.min(options.leaseMillis(), options.connectTimeoutMillis()))
                .retryPolicy(new ExponentialBackoffRetry(RETRY_BASE_MILLIS, RETRIES))
                .ensembleTracker(false)
                .build();
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected(options.connectTimeoutMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw new AsymNvmException(ErrorCode.TIMEOUT, "interrupted while connecting to ZooKeeper at '"
                    + options.connectString() + "'", e);
        }
        if (!connected) {
            client.close();
            throw new AsymNvmException(ErrorCode.TIMEOUT, "ZooKeeper at '" + options.connectString()
                    + "' not reachable within " + options.connectTimeoutMillis() + " ms (cluster '"
                    + options.clusterName() + "'): is it running, and is the address right?");
        }
        return new ClusterSession(options, client);
    }

    public ClusterOptions options() {
        return options;
    }

    public ClusterPaths paths() {
        return paths;
    }

    public ClusterStore store() {
        return store;
    }

    /** The Curator client, for recipes this module does not wrap. */
    public CuratorFramework curator() {
        return client;
    }

    /** The current ZooKeeper session id (changes after a session is lost and a new one made), 0 if none. */
    public long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** Ends the session: every lease of this node is released at once. */
    @Override
    public void close() {
        client.close();
    }
}
