package io.asymnvm.core;

/** Boundary validators whose messages name the bad value and the limit. */
public final class Checks {
    private Checks() {
    }

    public static long requirePositive(String name, long value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + " must be positive: " + value);
        }
        return value;
    }

    public static long requireRange(String name, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " out of range [" + min + ", " + max + "]: " + value);
        }
        return value;
    }

    public static long requirePowerOfTwo(String name, long value) {
        if (value <= 0 || Long.bitCount(value) != 1) {
            throw new IllegalArgumentException(name + " not a power of two: " + value);
        }
        return value;
    }

    public static long requireMultipleOf(String name, long value, long unit) {
        if (value % unit != 0) {
            throw new IllegalArgumentException(name + " not a multiple of " + unit + ": " + value);
        }
        return value;
    }

    /** Rounds {@code value} up to a multiple of the power-of-two {@code alignment}. */
    public static long align(long value, long alignment) {
        return (value + alignment - 1) & -alignment;
    }

    public static int align(int value, int alignment) {
        return (value + alignment - 1) & -alignment;
    }
}
