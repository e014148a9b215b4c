package io.asymnvm.cluster;

import java.util.Objects;

/** A value read from ZooKeeper with the znode version it was read at (the expected version of a compare-and-set). */
public record Versioned<T>(T value, int version) {
    public Versioned {
        Objects.requireNonNull(value, "value");
    }
}
