/**
 * Persistent memory regions: the {@link io.asymnvm.core.region.PersistentRegion} contract and its memory-mapped
 * file implementation (DAX with MAP_SYNC where the file system allows, msync otherwise).
 */
package io.asymnvm.core.region;
