/**
 * The frontend's links to the nodes it writes to: its backend ({@link io.asymnvm.frontend.link.BackendLink}:
 * connection, generation, reconnect and attach), its SYNC mirrors ({@link io.asymnvm.frontend.link.MirrorLinks}:
 * the semantic ring posted to every mirror at the backend's positions, FLUSHes in parallel, checkpoints for ring
 * release), and the epoch fence they all check ({@link io.asymnvm.frontend.link.EpochFence}).
 */
package io.asymnvm.frontend.link;
