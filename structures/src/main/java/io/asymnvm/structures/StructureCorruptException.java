package io.asymnvm.structures;

/**
 * A persistent structure whose bytes break its invariants (found by {@code verify()} or on the way). Names the
 * structure's root address and what is wrong.
 */
public final class StructureCorruptException extends IllegalStateException {
    public StructureCorruptException(String message) {
        super(message);
    }
}
