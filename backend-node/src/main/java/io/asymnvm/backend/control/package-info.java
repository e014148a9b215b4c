/** The backend control plane: attach (grants, fencing), slab grants and detach, as two-sided calls. */
package io.asymnvm.backend.control;
