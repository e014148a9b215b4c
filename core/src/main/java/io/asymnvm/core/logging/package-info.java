/**
 * Logging helpers: warnings a remote peer can trigger at will (authentication and frame refusals) go through a
 * {@link io.asymnvm.core.logging.RateLimitedLog}, so a hostile peer cannot flood the log; the counters beside them
 * stay exact.
 */
package io.asymnvm.core.logging;
