/** Reading a frontend's semantic log after the backend's checkpoint, for re-execution during recovery. */
package io.asymnvm.recovery.semantic;
