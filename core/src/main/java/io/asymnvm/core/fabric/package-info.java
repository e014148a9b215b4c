/**
 * The fabric SPI: connections that post one-sided READ/WRITE/CAS/FLUSH and two-sided control calls, with
 * {@link io.asymnvm.core.fabric.Completion completions} and {@link io.asymnvm.core.fabric.FabricCounters counters};
 * the responder side ({@link io.asymnvm.core.fabric.EmulatedNic}, {@link io.asymnvm.core.fabric.RegionTable},
 * {@link io.asymnvm.core.fabric.NicSession}); and the remote-persistence recipe per server configuration.
 */
package io.asymnvm.core.fabric;
