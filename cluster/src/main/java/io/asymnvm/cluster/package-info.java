/**
 * Cluster configuration on ZooKeeper through Apache Curator (DESIGN §6): the versioned configuration record
 * (epoch, backend, mirrors and their states), leases held through ephemeral nodes, and the in-process ZooKeeper
 * that one machine runs as the embedded default.
 */
package io.asymnvm.cluster;
