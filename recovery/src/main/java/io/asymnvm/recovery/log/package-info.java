/**
 * Log scanning: reading CRC-checked ring records at logical positions and finding a ring's valid tail, telling a
 * torn tail (truncate, warn) from corruption before the durable watermark (typed error).
 */
package io.asymnvm.recovery.log;
