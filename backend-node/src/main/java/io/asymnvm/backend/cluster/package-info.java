/**
 * A backend on the cluster's ZooKeeper (issue 9): the start rule and fencing through
 * {@link io.asymnvm.cluster.BackendGuard}, the backend lease, and the backend's duties towards the configuration's
 * mirrors (marking them in sync, dropping those whose lease lapsed); see {@link io.asymnvm.backend.cluster.ClusterBackend}.
 */
package io.asymnvm.backend.cluster;
