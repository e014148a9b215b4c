package io.asymnvm.examples.putbench;

/**
 * What {@link TimedPuts} drives: one durable put of {@code value} under {@code key}, returning once the target's
 * durability promise holds (a SYNC commit, a forced append, a MapDB commit). Called from several threads at once.
 */
@FunctionalInterface
interface PutTarget {
    void put(String key, byte[] value);
}
