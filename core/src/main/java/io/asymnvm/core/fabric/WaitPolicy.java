package io.asymnvm.core.fabric;

import java.util.Locale;

/**
 * How a caller waits for a {@link Completion}: busy-poll, spin for a learned bound and then park, or park at
 * once. One instance per frontend; {@link #adaptive()} learns from the waits it sees and is safe to share
 * between threads (a racy average is good enough for a spin bound).
 *
 * <ul>
 *   <li>{@link Kind#SPIN}: poll with {@link Thread#onSpinWait()} until the reply lands; never parks (until the
 *       timeout). For a caller that owns a core: the reply is picked up the moment the transport's thread (the
 *       Netty event loop on tcp) completes it, with no thread wake-up on the caller's side.</li>
 *   <li>{@link Kind#ADAPTIVE} (default): spin for twice the recent average wait, between
 *       {@value #MIN_SPIN_NANOS} ns and {@value #MAX_SPIN_NANOS} ns, then park. A reply that comes within about
 *       a round trip is caught spinning; a slow one (a loaded machine, a held FLUSH, a page read behind a busy
 *       backend) costs at most the bound in CPU before the caller parks.</li>
 *   <li>{@link Kind#PARK}: park at once; the completing thread unparks the caller (one wake-up per wait). For
 *       machines with more waiting threads than cores.</li>
 * </ul>
 */
public final class WaitPolicy {
    /** Lower bound of the adaptive spin, in nanoseconds. */
    public static final long MIN_SPIN_NANOS = 5_000;
    /** Upper bound of the adaptive spin, in nanoseconds. */
    public static final long MAX_SPIN_NANOS = 200_000;
    /** The adaptive spin bound before any wait was seen. */
    static final long INITIAL_SPIN_NANOS = 20_000;
    /** Weight of a new observation in the average, as a shift: 1/8. */
    private static final int AVERAGE_SHIFT = 3;

    /** The three ways to wait. */
    public enum Kind {
        SPIN, ADAPTIVE, PARK;

        /** Parses a name, case-insensitive; an unknown one is an {@link IllegalArgumentException} naming it. */
        public static Kind parse(String name) {
            for (Kind k : values()) {
                if (k.name().equalsIgnoreCase(name == null ? "" : name.trim())) {
                    return k;
                }
            }
            throw new IllegalArgumentException("unknown wait policy '" + name + "': expected one of spin, "
                    + "adaptive, park");
        }

        /** The lower-case name used on the command line. */
        public String cliName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private static final WaitPolicy SPIN = new WaitPolicy(Kind.SPIN);
    private static final WaitPolicy PARK = new WaitPolicy(Kind.PARK);

    private final Kind kind;
    private volatile long averageWaitNanos = INITIAL_SPIN_NANOS / 2;

    private WaitPolicy(Kind kind) {
        this.kind = kind;
    }

    public static WaitPolicy spin() {
        return SPIN;
    }

    public static WaitPolicy park() {
        return PARK;
    }

    /** A new adaptive policy with its own learned bound. */
    public static WaitPolicy adaptive() {
        return new WaitPolicy(Kind.ADAPTIVE);
    }

    /** The shared {@link #spin()} or {@link #park()}, or a new {@link #adaptive()}. */
    public static WaitPolicy of(Kind kind) {
        return switch (kind) {
            case SPIN -> SPIN;
            case PARK -> PARK;
            case ADAPTIVE -> adaptive();
        };
    }

    public Kind kind() {
        return kind;
    }

    /** How long a wait spins before it parks: unbounded for SPIN, 0 for PARK, the learned bound for ADAPTIVE. */
    public long spinNanos() {
        return switch (kind) {
            case SPIN -> Long.MAX_VALUE;
            case PARK -> 0;
            case ADAPTIVE -> Math.min(MAX_SPIN_NANOS, Math.max(MIN_SPIN_NANOS, 2 * averageWaitNanos));
        };
    }

    /** Records how long a wait took (start of the wait to the completion seen); ADAPTIVE learns from it. */
    void observed(long waitNanos) {
        if (kind == Kind.ADAPTIVE) {
            long avg = averageWaitNanos;
            averageWaitNanos = avg + ((Math.min(waitNanos, 4 * MAX_SPIN_NANOS) - avg) >> AVERAGE_SHIFT);
        }
    }

    @Override
    public String toString() {
        return kind.cliName();
    }
}
