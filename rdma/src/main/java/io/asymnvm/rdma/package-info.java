/**
 * The {@code rdma} fabric over DiSNI verbs (DESIGN §5): one-sided RDMA READ and WRITE on memory the backend
 * registered per region, and CAS, FLUSH, control calls and access verdicts as two-sided SEND/RECV messages
 * ({@link io.asymnvm.rdma.RdmaMessageLayout}) that the responder ({@link io.asymnvm.rdma.RdmaNicServer}) executes
 * through the same {@link io.asymnvm.core.fabric.EmulatedNic} as {@code tcp}. {@link io.asymnvm.rdma.RdmaProbe}
 * decides once per JVM whether libdisni and a device exist; the fabric SPI falls back to {@code tcp} otherwise.
 */
package io.asymnvm.rdma;
