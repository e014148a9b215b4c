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
 *   <li>{@link Kind#ADAPTIVE} (default): learns, from the waits it sees, whether spinning or parking answers
 *       sooner on this machine now, and does that. It keeps two running averages of the wait (start of the wait
 *       to the reply seen): one of waits that spun first (for twice the recent spinning wait, between
 *       {@value #MIN_SPIN_NANOS} ns and {@value #MAX_SPIN_NANOS} ns, then parked if need be) and one of waits that
 *       parked at once. Each wait takes the mode with the lower average, and one wait in {@value #EXPLORE_EVERY}
 *       tries the other so that a change of load is noticed. Why: on a machine with a core to spare a spinning
 *       waiter catches the reply without a wake-up, but on an oversubscribed one (measured on the 2-core build
 *       machine under a load of 15) the spinning waiter takes the CPU from the very threads that produce its
 *       reply (the transport's event loop, the backend), and parking at once answers about twice as fast.</li>
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
    /** Weight of a new observation in the averages, as a shift: 1/8. */
    private static final int AVERAGE_SHIFT = 3;
    /** One wait in this many tries the mode that is currently losing. */
    public static final int EXPLORE_EVERY = 16;

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
    /** ADAPTIVE: running averages of waits that spun first and of waits that parked at once (racy, by design). */
    private volatile long averageSpinningWaitNanos = INITIAL_SPIN_NANOS / 2;
    private volatile long averageParkingWaitNanos = INITIAL_SPIN_NANOS / 2;
    private int waits;

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

    /**
     * How long the next wait spins before it parks: unbounded for SPIN, 0 for PARK; for ADAPTIVE 0 when parking at
     * once is currently winning, else the learned bound (with one wait in {@value #EXPLORE_EVERY} the other way).
     */
    public long spinNanos() {
        return switch (kind) {
            case SPIN -> Long.MAX_VALUE;
            case PARK -> 0;
            case ADAPTIVE -> {
                boolean spinWins = averageSpinningWaitNanos <= averageParkingWaitNanos;
                boolean explore = ++waits % EXPLORE_EVERY == 0; // racy count: exploring roughly that often is enough
                yield spinWins != explore ? spinBound() : 0;
            }
        };
    }

    /** ADAPTIVE's spin bound when it spins: twice the recent spinning wait, within the bounds. */
    public long spinBound() {
        return Math.min(MAX_SPIN_NANOS, Math.max(MIN_SPIN_NANOS, 2 * averageSpinningWaitNanos));
    }

    /**
     * Records how long a wait took (start of the wait to the completion seen) and how long it was allowed to spin;
     * ADAPTIVE learns from it.
     */
    void observed(long spinNanos, long waitNanos) {
        if (kind != Kind.ADAPTIVE) {
            return;
        }
        long w = Math.min(waitNanos, 4 * MAX_SPIN_NANOS);
        if (spinNanos > 0) {
            long avg = averageSpinningWaitNanos;
            averageSpinningWaitNanos = avg + ((w - avg) >> AVERAGE_SHIFT);
        } else {
            long avg = averageParkingWaitNanos;
            averageParkingWaitNanos = avg + ((w - avg) >> AVERAGE_SHIFT);
        }
    }

    @Override
    public String toString() {
        return kind.cliName();
    }
}
