/** Slab grants: the persistent owner table, recorded before any grant is acknowledged. */
package io.asymnvm.backend.slab;
