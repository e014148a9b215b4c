package io.asymnvm.examples.events;

import io.asymnvm.frontend.PersistentTransaction;

import java.util.List;

/**
 * Events indexed by timestamp, in persistent memory. Use it through
 * {@code nvm.transactional(EventIndex.class, new EventIndexImpl(nvm, "events"))}: each method is then one persistent
 * transaction, and a mutating call returns only once it is durable.
 *
 * <p>Timestamps are unique keys chosen by the caller (e.g. epoch microseconds, or a clock reading combined with
 * a sequence number): pass them in, never read a clock inside a transaction. Recording a timestamp that already
 * holds an event is refused and changes nothing. Texts are at most 64 KiB of UTF-8.
 */
public interface EventIndex {
    /** The largest {@code limit} of one query. */
    int MAX_LIMIT = 10_000;

    /**
     * Records {@code text} at {@code timestamp}.
     *
     * @throws IllegalArgumentException if an event is already recorded at {@code timestamp}
     */
    @PersistentTransaction
    void record(long timestamp, String text);

    /**
     * Records {@code texts[i]} at {@code timestamps[i]} for every {@code i}, atomically: if any timestamp is
     * taken (or repeated in the batch), nothing is recorded.
     *
     * @throws IllegalArgumentException for a taken or repeated timestamp, or arrays of different lengths
     */
    @PersistentTransaction
    void recordAll(long[] timestamps, String[] texts);

    /**
     * Like {@link #recordAll}, for events as {@link Event} records. The list is a semantic-record argument whose
     * runtime classes are not declared parameter types: allow them before the first call and before recovery,
     * {@code nvm.allowArgumentClasses(Event.class, ArrayList.class)}, and pass an {@code ArrayList} (another list
     * class is refused at the call with {@code CLASS_NOT_REGISTERED} naming it).
     *
     * @throws IllegalArgumentException for a taken or repeated timestamp
     */
    @PersistentTransaction
    void recordEvents(List<Event> events);

    /**
     * The events with {@code from <= timestamp <= to}, newest first, at most {@code limit} of them (the newest
     * ones).
     *
     * @throws IllegalArgumentException if {@code from > to} or {@code limit} is outside {@code 1..}{@value #MAX_LIMIT}
     */
    @PersistentTransaction(readOnly = true)
    List<Event> between(long from, long to, int limit);

    /** The newest {@code limit} events, newest first. */
    @PersistentTransaction(readOnly = true)
    List<Event> latest(int limit);

    /** The event text at {@code timestamp}, or null. */
    @PersistentTransaction(readOnly = true)
    String at(long timestamp);

    /** Number of events. */
    @PersistentTransaction(readOnly = true)
    long count();

    /**
     * Retention: removes the oldest events with a timestamp below {@code timestamp}, at most {@code max} of them
     * (call again while it returns {@code max}). Returns how many were removed.
     *
     * @throws IllegalArgumentException if {@code max} is outside {@code 1..}{@value #MAX_LIMIT}
     */
    @PersistentTransaction
    int removeBefore(long timestamp, int max);
}
