package io.asymnvm.examples.events;

import java.util.Objects;

/** One event of an {@link EventIndex}: its timestamp (the caller's unit and epoch) and its text. */
public record Event(long timestamp, String text) {
    public Event {
        Objects.requireNonNull(text, "text");
    }
}
