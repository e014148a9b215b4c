/**
 * A time-ordered event index on a persistent B+tree ({@code PersistentBTree<Long, String>}, timestamp to event):
 * appends, range queries newest first with a limit, retention. Timestamps are arguments, never read from a clock
 * inside a transaction (transactions must be deterministic: they run again after a page miss and during recovery).
 */
package io.asymnvm.examples.events;
