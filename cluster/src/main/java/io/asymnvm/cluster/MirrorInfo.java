package io.asymnvm.cluster;

import java.util.Objects;

/** One mirror in the cluster configuration: where it is, how it replicates and whether it is in sync. */
public record MirrorInfo(NodeEndpoint node, ReplicationMode mode, MirrorState state) {
    public MirrorInfo {
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(state, "state");
    }

    public String id() {
        return node.id();
    }

    public MirrorInfo withState(MirrorState newState) {
        return new MirrorInfo(node, mode, newState);
    }

    /** True when this mirror may be promoted. */
    public boolean inSync() {
        return state == MirrorState.IN_SYNC;
    }
}
