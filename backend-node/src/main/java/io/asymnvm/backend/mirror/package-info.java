/**
 * Mirrors (issue 9, DESIGN §6): the node's role (backend or mirror) and epoch, the mirror's replay gate (replays only
 * what its backend shipped, keeping the slab owner table in step with the stream), the replication control calls
 * (peer attach, replicate, promote, add mirror) and the backend's {@link io.asymnvm.backend.mirror.MirrorShipper}.
 */
package io.asymnvm.backend.mirror;
