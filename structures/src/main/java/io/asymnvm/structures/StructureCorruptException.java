package io.asymnvm.structures;

/**
 * A persistent structure whose bytes break its invariants, found by {@code verify()} or while an operation ran:
 * a pointer outside the heap, a header magic or version that is not there, a record that does not parse. It is
 * the data's fault, never the caller's: it names the structure, the heap address, what was expected and what was
 * found. Nothing was written by the operation that met it.
 */
public final class StructureCorruptException extends IllegalStateException {
    private final String structure;
    private final long address;

    public StructureCorruptException(String message) {
        super(message);
        this.structure = null;
        this.address = -1;
    }

    /** {@code structure} and the heap {@code address} of the damaged bytes, what they are, expected and actual. */
    public StructureCorruptException(String structure, long address, String what, String expected, String actual,
                                     Throwable cause) {
        super(structure + " is corrupt: " + what + " at heap address " + address + ": expected " + expected
                + ", actual " + actual, cause);
        this.structure = structure;
        this.address = address;
    }

    /** The structure (name or root address), or null if the message alone describes it. */
    public String structure() {
        return structure;
    }

    /** The heap address of the damaged bytes, or -1. */
    public long address() {
        return address;
    }
}
