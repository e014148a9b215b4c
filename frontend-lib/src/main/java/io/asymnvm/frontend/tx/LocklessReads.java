package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.cache.CacheSequence;
import io.asymnvm.frontend.cache.PageCache;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Read-only transactions in parallel, without the execution lock (issue 8 goal 2, DESIGN §2 step 1 "where this
 * goes next", first half).
 *
 * <p><b>Design.</b> The page cache carries a change sequence ({@link CacheSequence}) and every cached page a
 * version (see {@link PageCache}, "Per-page versions"): every change of what a read can return is a section of the
 * sequence, made under the execution lock, and stamps the pages it installs with the sequence's value at its end. A
 * method that ran read-only last time (learned per registered method; a method runs its first call under the lock
 * or as an {@linkplain OptimisticWriters optimistic writer}) runs here instead: it takes an even sequence value
 * {@code seen}, runs the body against a lockless {@link TransactionContext}, which accepts a page only if its
 * version is at most {@code seen} and no invalidation happened since, and abandons the attempt at the first page
 * that changed ({@code CONFLICT}), so no attempt goes on with a mixed snapshot (no structural exception or endless
 * loop can come from a torn view): it sees the state as of {@code seen}. A commit invalidates only the readers of
 * the pages it changed. A page miss is fetched outside any lock, as under the lock, and the attempt runs again. An
 * attempt that would write, allocate or create a root is abandoned before any effect ({@code WRITES}): the method
 * is marked writing and the call runs again as a writer. After {@link #MAX_CONFLICTS} conflicts the call runs under
 * the lock.
 * A read-only result is returned only once every transaction whose writes it saw is durable, as before.
 *
 * <p>A lockless attempt skips what a read needs not: no argument encoding (a method that is not declared
 * read-only runs on the caller's arguments, not on a decoded copy; if it turns out to write, the call is logged
 * with the arguments as they are then), no semantic record, no redo, no transaction id. Writers take their
 * transaction id under the lock ({@link OptimisticWriters}), so transaction id order stays commit order.
 *
 * <p><b>Cost and bound.</b> A reader re-runs only when a page it reads was installed after it started (or on an
 * invalidation: a slab grant or return, a reconnect). Hot pages that every writer changes (a structure's counters,
 * a B+tree root being split) still conflict with every reader of them; the sequence itself is one word that every
 * commit increments, which bounds commits (not reads) on many cores.
 *
 * <p>{@code -Dasymnvm.lockless-reads=false} turns this path off (every call under the lock, as before), to
 * compare.
 */
final class LocklessReads {
    /** Conflicts of one call before it runs under the lock. */
    static final int MAX_CONFLICTS = 4;
    /** Longest wait for a writer's change section to end before the attempt counts as a conflict. */
    static final long MAX_STABLE_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Page preferences a lockless attempt could not apply, waiting for the next holder of the lock. */
    private static final int MAX_DEFERRED = 1024;

    /** The result of {@link #tryRun} when the call must run under the lock. */
    static final Object LOCKED = new Object();

    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("asymnvm.lockless-reads", "true"));

    /** Per registered method (by hash): whether its last completed call wrote nothing. */
    private final Map<Long, Boolean> readOnlyLastTime = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Long> deferred = new ConcurrentLinkedQueue<>();
    private final AtomicInteger deferredCount = new AtomicInteger();

    private final LongAdder attempts = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder abandoned = new LongAdder();
    /** Read-only calls completed here (a striped counter: readers on several cores share no cache line). */
    private final LongAdder completed = new LongAdder();

    /** What a lockless call needs of the engine. */
    interface Engine {
        PageCache cache();

        /** Throws if the engine no longer serves (superseded, failed, closed). */
        void checkServing();

        /** Does what a retry signal asks outside any lock (a page fetch). */
        void handle(RetrySignal signal, CallPages callPages);

        /** Waits until transaction {@code txId} is durable. */
        void awaitDurable(long txId);

        /** Counts one re-run, one abort or one read-only call in the engine's statistics. */
        void countRetry();

        void countAbort();
    }

    private final Engine engine;
    private final TransactionEngine owner;

    LocklessReads(TransactionEngine owner, Engine engine) {
        this.owner = owner;
        this.engine = engine;
    }

    /** Records how a call of {@code entry} ended under the lock: with nothing written, or with a commit. */
    void learn(MethodRegistry.Entry entry, boolean readOnly) {
        if (readOnlyLastTime.get(entry.hash()) != Boolean.valueOf(readOnly)) {
            readOnlyLastTime.put(entry.hash(), readOnly);
        }
    }

    /**
     * Runs the call without the lock if its method ran read-only last time; returns its result, or
     * {@link #LOCKED} if it must run under the lock (not eligible, wrote, too many conflicts). A user exception
     * of an attempt on a validated view is the call's outcome and is thrown.
     */
    Object tryRun(MethodRegistry.Entry entry, Object[] args, CallPages callPages)
            throws Throwable {
        if (!ENABLED || readOnlyLastTime.get(entry.hash()) != Boolean.TRUE) {
            return LOCKED;
        }
        PageCache cache = engine.cache();
        CacheSequence sequence = cache.sequence();
        int conflicted = 0;
        while (true) {
            engine.checkServing();
            long seen = sequence.stable(MAX_STABLE_WAIT_NANOS);
            RetrySignal retry;
            Object result = null;
            Throwable failure = null;
            TransactionContext tx = null;
            if (seen < 0) {
                retry = STILL_CHANGING;
            } else {
                long token = cache.fetchToken();
                callPages.validate(cache);
                tx = new TransactionContext(owner, callPages, seen, token);
                callPages.beginRun(tx);
                attempts.increment();
                Executor.BodyRun run = Executor.runBody(entry, args, tx, callPages);
                result = run.result();
                failure = run.failure();
                retry = run.retry();
                if (retry == null && !tx.stillValid()) {
                    retry = CHANGED_AT_END;
                }
            }
            if (retry == null) {
                if (failure != null) {
                    engine.countAbort();
                    throw failure;
                }
                completed.increment();
                engine.awaitDurable(tx.newestDirtyRead());
                return result;
            }
            engine.countRetry();
            switch (retry.reason) {
                case CONFLICT -> {
                    conflicts.increment();
                    if (++conflicted >= MAX_CONFLICTS) {
                        fallbacks.increment();
                        return LOCKED;
                    }
                }
                case PAGE_MISS -> engine.handle(retry, callPages);
                case WRITES -> {
                    abandoned.increment();
                    learn(entry, false);
                    return LOCKED;
                }
                default -> {
                    return LOCKED; // nothing else is raised without the lock; the locked path knows them all
                }
            }
        }
    }

    private static final RetrySignal STILL_CHANGING = new RetrySignal(RetrySignal.Reason.CONFLICT, -1);
    private static final RetrySignal CHANGED_AT_END = new RetrySignal(RetrySignal.Reason.CONFLICT, -1);

    /** A page preference a lockless attempt met: applied by the next holder of the lock ({@link #applyDeferred}). */
    void defer(long pageIndex) {
        if (deferredCount.get() < MAX_DEFERRED) {
            deferredCount.incrementAndGet();
            deferred.add(pageIndex);
        }
    }

    /** Under the execution lock: applies the deferred page preferences. */
    void applyDeferred(PageCache cache) {
        Long p;
        while ((p = deferred.poll()) != null) {
            deferredCount.decrementAndGet();
            cache.prefer(p);
        }
    }

    long attempts() {
        return attempts.sum();
    }

    long conflicts() {
        return conflicts.sum();
    }

    long fallbacks() {
        return fallbacks.sum();
    }

    long completed() {
        return completed.sum();
    }

    long abandoned() {
        return abandoned.sum();
    }
}
