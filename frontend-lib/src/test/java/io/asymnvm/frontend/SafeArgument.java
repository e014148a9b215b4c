package io.asymnvm.frontend;

/** An allowed argument class whose name has the length of {@link TrapArgument}'s (tests rewrite one into the other). */
public final class SafeArgument implements Shelf.Item {
    private final long grams;

    public SafeArgument(long grams) {
        this.grams = grams;
    }

    @Override
    public long weight() {
        return grams;
    }
}
