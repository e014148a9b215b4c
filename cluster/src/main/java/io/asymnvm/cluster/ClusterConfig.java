package io.asymnvm.cluster;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The cluster's one configuration record (issue 9, item 3): the epoch, the serving backend, the mirrors with their
 * replication mode and state, and the identity of the PM image the cluster serves. Immutable; every change returns a
 * new record, and {@link ClusterStore#compareAndSet} publishes it.
 *
 * <p>Invariants checked at construction: epoch &ge; 1, node ids unique across backend and mirrors. The JSON form
 * (see {@link ClusterConfigCodec}) is validated the same way on decode, with the failing field named.
 */
public final class ClusterConfig {
    private final long epoch;
    private final UUID imageId;
    private final NodeEndpoint backend;
    private final List<MirrorInfo> mirrors;

    public ClusterConfig(long epoch, UUID imageId, NodeEndpoint backend, List<MirrorInfo> mirrors) {
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be positive: " + epoch);
        }
        this.epoch = epoch;
        this.imageId = Objects.requireNonNull(imageId, "image");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.mirrors = List.copyOf(Objects.requireNonNull(mirrors, "mirrors"));
        Set<String> ids = new HashSet<>();
        ids.add(backend.id());
        for (int i = 0; i < this.mirrors.size(); i++) {
            String id = this.mirrors.get(i).id();
            if (!ids.add(id)) {
                throw new IllegalArgumentException("mirrors[" + i + "].id repeats a node id already in the configuration: '"
                        + id + "'");
            }
        }
    }

    /** A first configuration: epoch 1, no mirrors. */
    public static ClusterConfig initial(UUID imageId, NodeEndpoint backend) {
        return new ClusterConfig(1, imageId, backend, List.of());
    }

    public long epoch() {
        return epoch;
    }

    public UUID imageId() {
        return imageId;
    }

    public NodeEndpoint backend() {
        return backend;
    }

    /** The mirrors in configuration order (unmodifiable). */
    public List<MirrorInfo> mirrors() {
        return mirrors;
    }

    public Optional<MirrorInfo> mirror(String nodeId) {
        return mirrors.stream().filter(m -> m.id().equals(nodeId)).findFirst();
    }

    /** True when {@code nodeId} is the backend of this configuration. */
    public boolean isBackend(String nodeId) {
        return backend.id().equals(nodeId);
    }

    /** Adds a mirror (normally {@link MirrorState#CATCHING_UP}); refused if its id is already in the configuration. */
    public ClusterConfig withMirror(MirrorInfo mirror) {
        List<MirrorInfo> next = new ArrayList<>(mirrors);
        next.add(mirror);
        return new ClusterConfig(epoch, imageId, backend, next);
    }

    /** The same configuration with one mirror's state changed; the epoch stays (the backend does not change). */
    public ClusterConfig withMirrorState(String mirrorId, MirrorState state) {
        requireMirror(mirrorId);
        List<MirrorInfo> next = new ArrayList<>(mirrors.size());
        for (MirrorInfo m : mirrors) {
            next.add(m.id().equals(mirrorId) ? m.withState(state) : m);
        }
        return new ClusterConfig(epoch, imageId, backend, next);
    }

    /** The same configuration without one mirror (a crashed or retired mirror); the epoch stays. */
    public ClusterConfig dropMirror(String mirrorId) {
        requireMirror(mirrorId);
        List<MirrorInfo> next = new ArrayList<>(mirrors);
        next.removeIf(m -> m.id().equals(mirrorId));
        return new ClusterConfig(epoch, imageId, backend, next);
    }

    /**
     * The configuration after a failover: epoch + 1, the mirror becomes the backend and leaves the mirror list (the old
     * backend is not listed; it rejoins as a mirror once fenced and caught up). Only an in-sync mirror can be promoted:
     * a catching-up one is refused with {@link ErrorCode#REPLICA_BEHIND}.
     */
    public ClusterConfig promote(String mirrorId) {
        MirrorInfo m = requireMirror(mirrorId);
        if (!m.inSync()) {
            throw new AsymNvmException(ErrorCode.REPLICA_BEHIND, "mirror '" + mirrorId + "' is " + m.state()
                    + " in epoch " + epoch + ": only an IN_SYNC mirror can be promoted");
        }
        // the other mirrors followed the old backend: not promotable until the new one's shipper has them in sync
        List<MirrorInfo> next = new ArrayList<>();
        for (MirrorInfo other : mirrors) {
            if (!other.equals(m)) {
                next.add(other.inSync() ? new MirrorInfo(other.node(), other.mode(), MirrorState.CATCHING_UP) : other);
            }
        }
        return new ClusterConfig(Math.addExact(epoch, 1), imageId, m.node(), next);
    }

    private MirrorInfo requireMirror(String mirrorId) {
        return mirror(mirrorId).orElseThrow(() -> new IllegalArgumentException("no mirror '" + mirrorId
                + "' in the configuration of epoch " + epoch + " (mirrors: " + mirrors.stream().map(MirrorInfo::id).toList()
                + ")"));
    }

    /** The JSON form stored in ZooKeeper. */
    public byte[] toJson() {
        return ClusterConfigCodec.encode(this);
    }

    /**
     * Decodes and validates the JSON form.
     *
     * @throws AsymNvmException {@link ErrorCode#CORRUPT_RECORD} naming the bad field and value
     */
    public static ClusterConfig fromJson(byte[] json) {
        return ClusterConfigCodec.decode(json);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ClusterConfig c && c.epoch == epoch && c.imageId.equals(imageId) && c.backend.equals(backend)
                && c.mirrors.equals(mirrors);
    }

    @Override
    public int hashCode() {
        return Objects.hash(epoch, imageId, backend, mirrors);
    }

    @Override
    public String toString() {
        return "ClusterConfig{epoch=" + epoch + ", image=" + imageId + ", backend=" + backend + ", mirrors=" + mirrors + "}";
    }
}
