package io.asymnvm.cluster;

/** How a mirror receives the backend's updates (issue 9, item 2). */
public enum ReplicationMode {
    /** Frontends post each semantic record to the backend and to this mirror in parallel: no acknowledged commit lost. */
    SYNC,
    /** The backend ships periodically with a bounded lag (AsymNVM's periodic sync). */
    ASYNC
}
