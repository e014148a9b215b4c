package io.asymnvm.backend.mirror;

import io.asymnvm.core.Checks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which frontends hold a live session on this backend, and for how long one has held none: what bounds the time a
 * frontend that crashed and never came back may keep a joining SYNC mirror catching up.
 *
 * <p>Design. A frontend that crashed stays attached in its control block (it never detached), so the mirror's rule
 * (MirrorReplayGate: every attached frontend declares the mirror) waits for its declaration, which only a new
 * incarnation would send. Waiting is right while the crashed frontend may have acknowledged commits that exist on
 * this backend only, as semantic records not yet applied (they are re-executed when it recovers). Once it has had no
 * session for {@link #goneMillis()} (the backend's {@code frontendGoneMillis}) the shipper checks that nothing of it
 * is only here: every durable semantic record applied on this backend, and the mirror applied as far. Then it stops
 * reporting the frontend as one to wait for (as if it had detached), logs it, and lists it in {@code status}; else it
 * logs which records hold the mirror back. A frontend that returns attaches under a new attach epoch and is waited
 * for again (until the mirror is in sync).
 *
 * <p>Thread-safe: the control plane records sessions, shippers read.
 */
public final class FrontendPresence {
    /** Default of {@code frontendGoneMillis}: one minute without a session. */
    public static final long DEFAULT_GONE_MILLIS = 60_000;
    public static final long MAX_GONE_MILLIS = 86_400_000;
    /** {@link #goneSince} value of a frontend with a live session. */
    private static final long PRESENT = 0;

    /** Per frontend: {@link #PRESENT}, or the {@link System#nanoTime()} (never 0) its last session went. */
    private final AtomicLongArray goneSince;
    private volatile long goneMillis = DEFAULT_GONE_MILLIS;

    /** Every frontend counts as gone since now (a restarted backend has no session yet). */
    public FrontendPresence(int frontends) {
        goneSince = new AtomicLongArray(frontends);
        long now = stamp();
        for (int f = 0; f < frontends; f++) {
            goneSince.set(f, now);
        }
    }

    /** Sets how long a frontend may be without a session before it is checked (in [1, {@value #MAX_GONE_MILLIS}]). */
    public void goneMillis(long millis) {
        goneMillis = requireGoneMillis(millis);
    }

    public long goneMillis() {
        return goneMillis;
    }

    /** Validates a {@code frontendGoneMillis} value, naming it and the range. */
    public static long requireGoneMillis(long millis) {
        return Checks.requireRange("time a frontend without a session may hold back a joining mirror, in ms "
                + "(frontendGoneMillis)", millis, 1, MAX_GONE_MILLIS);
    }

    /** Frontend {@code f} attached on a session. */
    public void attached(int f) {
        goneSince.set(f, PRESENT);
    }

    /** The current session of frontend {@code f} closed or detached. */
    public void gone(int f) {
        goneSince.set(f, stamp());
    }

    /** Milliseconds frontend {@code f} has been without a session, or -1 while it holds one. */
    public long millisGone(int f) {
        long since = goneSince.get(f);
        return since == PRESENT ? -1 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    /** Whether frontend {@code f} has been without a session for at least {@link #goneMillis()}. */
    public boolean goneLong(int f) {
        return millisGone(f) >= goneMillis;
    }

    private static long stamp() {
        long now = System.nanoTime();
        return now == PRESENT ? 1 : now;
    }
}
