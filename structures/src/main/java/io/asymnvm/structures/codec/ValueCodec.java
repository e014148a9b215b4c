package io.asymnvm.structures.codec;

/**
 * Turns values into bytes and back. Implementations must be deterministic (the same value always encodes to the
 * same bytes: structure operations run again after a page miss and during recovery) and thread-safe.
 *
 * @param <T> the value type
 */
public interface ValueCodec<T> {

    /**
     * Stable id recorded in structure headers. Ids 1..999 are reserved for the built-ins of {@link Codecs};
     * application codecs use 1000 and up.
     */
    int id();

    /** Short human-readable name for messages, e.g. {@code "long"}. */
    String name();

    /** The encoding of {@code value}; a {@link NullPointerException} for null. */
    byte[] encode(T value);

    /**
     * Decodes {@code length} bytes at {@code offset}; an {@link IllegalArgumentException} naming the codec when
     * the bytes are not a valid encoding.
     */
    T decode(byte[] bytes, int offset, int length);

    default T decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    /** Length of every encoding if the codec is fixed-size, otherwise -1. */
    default int fixedSize() {
        return -1;
    }
}
