package io.asymnvm.frontend.cache;

import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The page cache's change sequence: a seqlock over everything a transaction can read from the cache (the
 * read-only half of DESIGN §2 step 1, "readers validating with a seqlock", as in AsymNVM's optimistic reads and the
 * Linux kernel's {@code seqcount_t}).
 *
 * <p><b>Writer side.</b> Every change of what a read can return (a committed write set installed, an invalidation,
 * a change of ownership) happens between {@link #beginChange()} and {@link #endChange()}, by the one thread holding
 * the frontend's execution lock. The value is odd while a change is in progress. Sections nest (a slab grant wraps
 * its invalidation and the allocator's change in one section): only the outermost pair moves the value, so a
 * reader never sees an even value in the middle of a compound change. Changes that do not change what a read
 * returns (a clean page fetched and inserted, an applied dirty page moving to the clean cache, an eviction) are not
 * sections: a reader that then misses a page fetches it, as it would under the lock.
 *
 * <p><b>Reader side.</b> A reader takes {@link #stable(long)} (an even value) before its first read. The value is
 * also the clock of the page cache's per-page versions: a section stamps what it installs with the value it ends
 * at, so a reader that accepts only pages whose version is at most its value never computes on a mixed snapshot,
 * and is not disturbed by changes to pages it does not read ({@code PageCache}, "Per-page versions").
 * {@link #unchanged(long)} is the whole-cache check (kept for pages a call holds outside the cache).
 *
 * <p>Thread-safe: any thread reads; the writer methods need the execution lock (they are not atomic otherwise).
 */
public final class CacheSequence {
    /** Spins before a waiting reader yields its core (the writer's section is short: no network inside). */
    private static final int SPINS = 64;

    private final AtomicLong value = new AtomicLong();
    /** Nesting depth of the writer's sections; touched only under the execution lock. */
    private int depth;

    /** Starts a change (nested: only the outermost moves the value to odd). Under the execution lock. */
    public void beginChange() {
        if (depth++ == 0) {
            value.incrementAndGet();
        }
    }

    /** Ends a change started by {@link #beginChange()} (the outermost makes the value even again). */
    public void endChange() {
        if (depth <= 0) {
            throw new IllegalStateException("cache change ended without a begin");
        }
        if (--depth == 0) {
            value.incrementAndGet();
        }
    }

    /** The current value (odd while a change is in progress). */
    public long current() {
        return value.get();
    }

    /**
     * An even value, waiting while a change is in progress (spinning, then yielding) for at most
     * {@code maxWaitNanos}; -1 if a change was still in progress then (the caller falls back to the lock).
     */
    public long stable(long maxWaitNanos) {
        long v = value.get();
        if ((v & 1) == 0) {
            return v;
        }
        long start = System.nanoTime();
        for (int i = 0; ; i++) {
            if (i < SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
                if (System.nanoTime() - start > maxWaitNanos) {
                    return -1;
                }
            }
            v = value.get();
            if ((v & 1) == 0) {
                return v;
            }
        }
    }

    /** Whether no change started since {@code seen} (a value from {@link #stable}) was read. */
    public boolean unchanged(long seen) {
        VarHandle.acquireFence(); // the reads of cache contents before this stay before the check
        return value.get() == seen;
    }
}
