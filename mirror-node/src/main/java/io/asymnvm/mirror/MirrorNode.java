package io.asymnvm.mirror;

import io.asymnvm.backend.BackendConfiguration;
import io.asymnvm.backend.BackendNode;
import io.asymnvm.backend.mirror.ReplicationService;
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
 * streams redo. {@link #promote} makes it the backend under epoch + 1 (refused with {@code REPLICA_BEHIND} while
 * it catches up, {@code STALE_EPOCH} once promoted).
 */
public final class MirrorNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MirrorNode.class);

    private final BackendNode node;
    /** Null for a mirror shipped to over the local fabric (it cannot ask a remote backend to ship again). */
    private final BackendConfiguration config;

    private MirrorNode(BackendNode node, BackendConfiguration config) {
        this.node = node;
        this.config = config;
    }

    /**
     * Starts a mirror of the backend at {@code backendHost:backendPort} (tcp), serving on {@code config}'s port
     * (which must listen: {@code port >= 0}); {@code config.credentialsFile()} must be the backend's credentials
     * file (null only with authentication off on both).
     */
    public static MirrorNode start(BackendConfiguration config, String backendHost, int backendPort) {
        if (config.port() < 0) {
            throw new IllegalArgumentException("a mirror started from a remote backend must listen on tcp: port "
                    + config.port() + " given, expected 0..65535");
        }
        byte[] secret = ReplicationClient.secretOf(config.credentialsFile()); // before anything is bound or mapped
        try (Fabric backend = new TcpFabric(backendHost, backendPort)) {
            Superblock sb = Files.exists(config.pmFile()) ? null
                    : ReplicationClient.addMirror(backend, secret, false, config.bindHost(), 0);
            if (sb != null && config.size() != BackendConfiguration.DEFAULT_SIZE && config.size() != sb.fileSize()) {
                throw new IllegalArgumentException("mirror size " + config.size() + " differs from the backend's "
                        + "image of " + sb.fileSize() + " bytes: a mirror has its backend's geometry (omit --size)");
            }
            BackendNode node = BackendNode.startMirror(config, sb);
            try {
                ReplicationClient.addMirror(backend, secret, true, config.bindHost(), node.port());
            } catch (RuntimeException e) {
                node.close();
                throw e;
            }
            LOG.info("mirror of {}:{} serving on {}:{}", backendHost, backendPort, config.bindHost(), node.port());
            return new MirrorNode(node, config);
        }
    }

    /**
     * Starts a mirror of a backend in this JVM, shipped to over the {@code local} fabric (tests, embedded use); a
     * new image is formatted as the backend's.
     */
    public static MirrorNode startLocal(BackendConfiguration config, BackendNode backend) {
        Superblock sb = SuperblockLayout.withEpoch(backend.superblock(), backend.replication().epoch());
        BackendNode node = BackendNode.startMirror(config, Files.exists(config.pmFile()) ? null : sb);
        try {
            backend.replication().addMirror("local:" + config.pmFile().getFileName(), node.localFabric());
        } catch (RuntimeException e) {
            node.close();
            throw e;
        }
        return new MirrorNode(node, null);
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
            ReplicationClient.addMirror(backend, secret, true, config.bindHost(), node.port());
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
