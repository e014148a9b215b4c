/** The frontend side of the logs: ring appenders for the semantic and redo rings and the redo buffer. */
package io.asymnvm.frontend.log;
