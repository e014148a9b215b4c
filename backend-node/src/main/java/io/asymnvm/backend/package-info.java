/**
 * The backend (memory node): configuration, start-up recovery, the emulated NIC and control plane wiring, the
 * embedded factory and the {@code backend} command.
 */
package io.asymnvm.backend;
