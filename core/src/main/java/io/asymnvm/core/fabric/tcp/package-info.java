/**
 * The TCP fabric: an emulated NIC ({@link io.asymnvm.core.fabric.tcp.TcpNicServer}) executing one-sided operations
 * on the responder's mapped memory without its application logic, and the requester
 * ({@link io.asymnvm.core.fabric.tcp.TcpFabric}). Netty, length-prefixed little-endian frames.
 */
package io.asymnvm.core.fabric.tcp;
