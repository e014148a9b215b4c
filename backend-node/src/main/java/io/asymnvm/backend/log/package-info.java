/** Per-frontend log areas on the backend: control block, semantic and redo rings, replay checkpoint. */
package io.asymnvm.backend.log;
