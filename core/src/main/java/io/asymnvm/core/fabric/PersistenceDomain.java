package io.asymnvm.core.fabric;

/**
 * Where a memory node's persistence domain ends (the taxonomy of "Correct, Fast Remote Persistence").
 * {@code ADR}: DIMMs and memory controller; stores in CPU caches must be written back. {@code EADR}: the whole
 * memory hierarchy, caches included. {@code WHOLE_SYSTEM}: the whole machine (battery-backed).
 */
public enum PersistenceDomain {
    ADR,
    EADR,
    WHOLE_SYSTEM
}
