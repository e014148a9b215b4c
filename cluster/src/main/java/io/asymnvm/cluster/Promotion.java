package io.asymnvm.cluster;

/**
 * What a mirror process does to become the backend, called by {@link FailoverCoordinator} in two steps around the
 * configuration compare-and-set (see the coordinator for why this order is safe).
 */
public interface Promotion {
    /**
     * Finishes replaying everything this mirror received, without serving yet, and returns the last applied
     * transaction id. Called after this mirror took the backend lease and before the configuration names it. Throw
     * (e.g. {@link io.asymnvm.core.ErrorCode#REPLICA_BEHIND}) to give up: the lease is released and nothing changes.
     */
    long finishReplay() throws Exception;

    /**
     * Starts serving as the backend at {@code newEpoch}: persist the epoch in the superblock, accept frontends,
     * refuse anything older. Called only after the configuration naming this node at {@code newEpoch} is committed.
     * If this throws, the coordinator releases the backend lease so another in-sync mirror takes over at a later
     * epoch.
     */
    void promote(long newEpoch, ClusterConfig config) throws Exception;
}
