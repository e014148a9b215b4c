/**
 * Recovery-time measurements behind {@code asymnvm bench recovery} (frontend: re-executing N semantic records
 * after the applied transaction, {@link io.asymnvm.examples.recovery.FrontendRecoveryRun}) and
 * {@code asymnvm bench restart} (backend: start of a node on an existing PM file of a given size,
 * {@link io.asymnvm.examples.recovery.BackendRestartRun}).
 */
package io.asymnvm.examples.recovery;
