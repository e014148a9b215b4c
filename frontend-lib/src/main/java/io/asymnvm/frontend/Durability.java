package io.asymnvm.frontend;

/**
 * {@code SYNC}: the call returns once its semantic record is persistent on the backend (one round trip, shared by
 * concurrent transactions). {@code ASYNC}: the call returns at once; a background flush makes it durable within
 * the configured interval, and a crash may lose the transactions of that window (never part of one).
 */
public enum Durability {
    SYNC,
    ASYNC
}
