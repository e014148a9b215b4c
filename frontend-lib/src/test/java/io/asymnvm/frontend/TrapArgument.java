package io.asymnvm.frontend;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A class with side effects in its static initializer and constructor, named by crafted semantic records: the
 * argument decoder must never load, initialize or instantiate it. Tests read {@link Flag#TOUCHED} through
 * its own class so that reading the flag does not initialize this class.
 */
public final class TrapArgument implements Shelf.Item {
    static {
        Flag.TOUCHED.set(true);
    }

    private final long grams;

    public TrapArgument(long grams) {
        Flag.TOUCHED.set(true);
        this.grams = grams;
    }

    @Override
    public long weight() {
        return grams;
    }

    /** Set once {@link TrapArgument} is initialized or constructed. */
    public static final class Flag {
        public static final AtomicBoolean TOUCHED = new AtomicBoolean();

        private Flag() {
        }
    }
}
