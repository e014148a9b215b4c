/**
 * Key and value codecs: how objects become the bytes stored in persistent structures. A codec has a stable
 * numeric id recorded in each structure's header, so a structure is never read with a codec other than the one
 * it was written with. Key codecs are order-preserving: the B+tree orders keys by the unsigned lexicographic
 * order of their encodings, and {@link io.asymnvm.structures.codec.KeyCodec#comparator()} states that order on
 * objects.
 */
package io.asymnvm.structures.codec;
