/**
 * {@code asymnvm bench puts} (issue 8, goals 3 and 7): durable one-put transactions on a persistent hash map, measured
 * in the same run and on the same file system against the raw floor (append + force of records of the same size)
 * and against MapDB (file DB with its write-ahead log, one commit per put), with the PM bytes the backend persisted
 * per logical byte put (write amplification).
 */
package io.asymnvm.examples.putbench;
