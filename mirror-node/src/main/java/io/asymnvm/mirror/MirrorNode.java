package io.asymnvm.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.ReplicationService;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.layout.ReplicationLayout;
import io.asymnvm.core.layout.SuperblockLayout;
import io.asymnvm.core.layout.SuperblockLayout.Superblock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;

/**
 * A mirror node (issue 9): a {@link BackendNode} in the mirror role, with the same PM layout, image identity and
 * geometry as its backend, kept up to date by the backend's shipper and replayed by the same replayer.
 *
 * <p>{@link #start} asks the backend (ADD_MIRROR, proving the replication secret of the shared credentials file)
 * for its superblock when the PM file does not exist yet and formats the image as that one, starts serving, then
 * asks the backend to ship to this node's address: the backend attaches as replication peer, copies the image and
 * streams redo. On an existing image (a restart) it recovers first: replays the redo its persisted state confirms and
 * comes up in sync if its persisted mark says so; if the backend cannot be reached then, it keeps serving that state
 * (so a mirror that outlived its backend can still be promoted). {@link #promote} makes it the backend under
 * epoch + 1 (refused with {@code REPLICA_BEHIND} while it catches up, {@code STALE_EPOCH} once promoted).
 */
public final class MirrorNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorNode.class);

    private final BackendNode node;
    /** Null for a mirror shipped to over the local fabric (it cannot ask a remote backend to ship again). */
    private final BackendConfiguration config;
    /** Whether this mirror asked to be shipped to as ASYNC (it asks the same way when it re-attaches). */
    private final boolean async;

    private MirrorNode(BackendNode node, BackendConfiguration config, boolean async) {
        this.node = node;
        this.config = config;
        this.async = async;
    }

    /**
     * Starts a mirror of the backend at {@code backendHost:backendPort} (tcp), serving on {@code config}'s port
     * (which must listen: {@code port >= 0}); {@code config.credentialsFile()} must be the backend's credentials
     * file (null only with authentication off on both).
     */
    public static MirrorNode start(BackendConfiguration config, String backendHost, int backendPort) {
        return start(config, backendHost, backendPort, false);
    }

    /**
     * {@link #start(BackendConfiguration, String, int)}; {@code async}: an ASYNC mirror (issue 9): the backend ships
     * the frontends' durable semantic records to it as well, and frontends do not post to it.
     */
    public static MirrorNode start(BackendConfiguration config, String backendHost, int backendPort,
                                   boolean async) {
        if (config.port() < 0) {
            throw new IllegalArgumentException("a mirror started from a remote backend must listen on tcp: port "
                    + config.port() + " given, expected 0..65535");
        }
        byte[] secret = ReplicationClient.secretOf(config.credentialsFile()); // before anything is bound or mapped
        boolean restart = Files.exists(config.pmFile());
        try (Fabric backend = new TcpFabric(backendHost, backendPort)) {
            Superblock sb = restart ? null
                    : ReplicationClient.addMirror(backend, secret, false, config.bindHost(), 0);
            if (sb != null && config.size() != BackendConfiguration.DEFAULT_SIZE && config.size() != sb.fileSize()) {
                throw new IllegalArgumentException("mirror size " + config.size() + " differs from the backend's "
                        + "image of " + sb.fileSize() + " bytes: a mirror has its backend's geometry (omit --size)");
            }
            BackendNode node = BackendNode.startMirror(config, sb);
            try {
                ReplicationClient.addMirror(backend, secret, true, async, config.bindHost(), node.port());
            } catch (RuntimeException e) {
                if (restart && unreachable(e)) {
                    return restartedWithoutBackend(node, config, async, backendHost, backendPort, e);
                }
                node.close();
                throw e;
            }
            LOG.info("mirror of {}:{} serving on {}:{}", backendHost, backendPort, config.bindHost(), node.port());
            return new MirrorNode(node, config, async);
        }
    }

    // ---- restart on an existing image (persisted replication state, MirrorStateStore) ----

    private static boolean unreachable(RuntimeException e) {
        return e instanceof AsymNvmException a && a.errorCode() == ErrorCode.CONNECTION_LOST;
    }

    /**
     * A mirror restarted on its existing image while its backend cannot be reached (it may be lost for good): it keeps
     * serving what it recovered, in sync if its persisted mark says so (then it can be promoted), else catching up
     * (refusing promotion with {@code REPLICA_BEHIND}). A backend that comes back re-attaches when asked again.
     */
    private static MirrorNode restartedWithoutBackend(BackendNode node, BackendConfiguration config, boolean async,
                                                      String host, int port, RuntimeException e) {
        LOG.warn("mirror restarted on {} but its backend {}:{} is unreachable ({}); serving the recovered image, {}",
                node.port(), host, port, e.getMessage(),
                ReplicationLayout.stateName(node.replication().state()));
        return new MirrorNode(node, config, async);
    }

    /**
     * Starts a mirror of a backend in this JVM, shipped to over the {@code local} fabric (tests, embedded use); a
     * new image is formatted as the backend's.
     */
    public static MirrorNode startLocal(BackendConfiguration config, BackendNode backend) {
        return startLocal(config, backend, false);
    }

    /** {@link #startLocal(BackendConfiguration, BackendNode)}; {@code async}: an ASYNC mirror (issue 9). */
    public static MirrorNode startLocal(BackendConfiguration config, BackendNode backend, boolean async) {
        Superblock sb = SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch());
        BackendNode node = BackendNode.startMirror(config, Files.exists(config.pmFile()) ? null : sb);
        try {
            backend.replication().addMirror("local:" + config.pmFile().getFileName(), node.localFabric(), async);
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
        return new MirrorNode(node, null, async);
    }

    /**
     * Asks the backend at {@code backendHost:backendPort} to ship to this mirror again (ADD_MIRROR with shipping):
     * a backend that dropped this mirror from the cluster (its lease lapsed, e.g. through a ZooKeeper outage) stopped
     * its shipper, and a mirror that rejoins the configuration needs a new one (image copy, then the redo stream)
     * before it can be in sync again.
     *
     * @throws IllegalStateException for a mirror started with {@link #startLocal}
     */
    public void reattach(String backendHost, int backendPort) {
        if (config == null) {
            throw new IllegalStateException("a mirror shipped to over the local fabric cannot re-attach to "
                    + backendHost + ":" + backendPort);
        }
        byte[] secret = ReplicationClient.secretOf(config.credentialsFile());
        try (Fabric backend = new TcpFabric(backendHost, backendPort)) {
            ReplicationClient.addMirror(backend, secret, true, async, config.bindHost(), node.port());
        }
        LOG.info("mirror on {}:{} asked {}:{} to ship to it again", config.bindHost(), node.port(), backendHost,
                backendPort);
    }

    /** The node (its fabric, port, logs, slab table, superblock). */
    public BackendNode node() {
        return node;
    }

    public Fabric localFabric() {
        return node.localFabric();
    }

    public int port() {
        return node.port();
    }

    public ReplicationService replication() {
        return node.replication();
    }

    /** Catching up, in sync, or serving (after promotion). */
    public int state() {
        return node.replication().state();
    }

    public boolean inSync() {
        return state() == ReplicationLayout.STATE_IN_SYNC;
    }

    public long epoch() {
        return node.replication().epoch();
    }

    /** Promotes this mirror to backend; returns the new epoch once it serves as backend. */
    public long promote() {
        return node.promote();
    }

    @Override
    public void close() {
        node.close();
    }
}
