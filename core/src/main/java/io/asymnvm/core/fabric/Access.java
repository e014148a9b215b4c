package io.asymnvm.core.fabric;

/** What a session may do to a registered region. */
public enum Access {
    READ,
    READ_WRITE;

    public boolean allowsWrite() {
        return this == READ_WRITE;
    }
}
