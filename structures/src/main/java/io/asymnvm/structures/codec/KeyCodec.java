package io.asymnvm.structures.codec;

import java.util.Comparator;

/**
 * A codec usable for keys. Two rules beyond {@link ValueCodec}: equal keys have equal encodings (the hash map
 * compares and hashes encoded bytes), and the encoding is order-preserving: {@link #comparator()} orders keys
 * exactly as {@link java.util.Arrays#compareUnsigned(byte[], byte[])} orders their encodings (the B+tree compares
 * encoded bytes without decoding).
 *
 * @param <T> the key type
 */
public interface KeyCodec<T> extends ValueCodec<T> {

    /** The key order, consistent with the unsigned lexicographic order of the encodings. */
    Comparator<T> comparator();
}
