/** The in-process fabric used by embedded deployments and tests: same NIC code path, no sockets. */
package io.asymnvm.core.fabric.local;
