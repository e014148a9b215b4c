package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.cache.CacheSequence;
import io.asymnvm.frontend.cache.PageCache;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Writers in parallel (issue 8 goal 2, DESIGN §2 step 1 "where this goes next", second half): optimistic
 * execution validated against per-page versions at commit.
 *
 * <p><b>Design.</b> An attempt of a logged call runs its method body <em>without</em> the execution lock
 * {@code exec}, on arguments decoded afresh from the bytes it will log. It starts at an even value {@code seen} of
 * the cache's change sequence and accepts a page from the cache only if the page's version is at most
 * {@code seen} (see {@link PageCache}, "Per-page versions"), so the body computes on the committed state as of
 * {@code seen}, never on a mix (no structural exception or endless loop can come from a torn view). It records the
 * version of every page it read (its read set); its writes go, as under the lock, to private copy-on-write pages
 * and to its write set. At the end it takes {@code exec}, now a short ordering lock, and validates: every page of
 * the read set still has the version it read, no invalidation happened since {@code seen}, every written range is
 * still owned. Only then, still under the lock, it takes the next transaction id, posts the semantic record,
 * installs its pages and appends its redo, exactly as a locked attempt does ({@link CommitPipeline#logAndApply}).
 * A failed validation runs the call again ({@code CONFLICT}); after {@link #MAX_CONFLICTS} conflicts the call runs
 * under the lock as before, so every call makes progress. What only the lock may do (allocate or free a block, set
 * a root or the directory, create a named root, use a page the cache does not hold) abandons the attempt before
 * any effect ({@code LOCK_NEEDED}) and the call runs under the lock; the method then runs under the lock for its
 * next {@link #LOCKED_AFTER_NEED} calls, so allocating methods waste few attempts.
 *
 * <p><b>Why recovery re-executes to the same state.</b> Transaction ids are taken under {@code exec}, after the
 * validation, and the install happens in the same critical section; every install of every writer (optimistic or
 * locked) is such a section, so id order is commit order is install order, and it is the order of the semantic
 * ring that recovery re-executes. Let T commit with id t. Every page T read has, at validation, the version it
 * read; versions change at every install and every invalidation of a page (a refetched page gets a version at
 * least as new as its bytes), so every page T read holds, at the moment t is taken, the same bytes T read: the
 * state left by transactions 1..t-1. Pages T wrote without reading them were written whole or were known zero
 * because of what T read (the allocator's bump pointer, a node pool cursor), which validation covers too. So T's
 * body, run now under the lock on the state after t-1, would read the same bytes and, being deterministic on
 * arguments decoded from the logged bytes, write the same bytes: T's write set is the one a serial execution in id
 * order produces. Recovery re-executes records in id order on the backend's applied state (DESIGN §4), which is by
 * induction that same serial history, so it reproduces T's writes. Read-only attempts (no writes) return without
 * the lock: they saw the state as of {@code seen}, a point inside the call.
 *
 * <p><b>What stays under the lock.</b> Allocation and root changes (the allocator's DRAM state is not versioned),
 * recovery re-execution (sequential, adopting records), the naive baseline (its own lock, unchanged), calls whose
 * pages the cache cannot hold (tiny caches, memory not owned), and a call after too many conflicts.
 *
 * <p><b>Scaling.</b> The body runs in parallel; the serial part per commit is the validation (one map lookup per
 * page read) plus id, record post, install and redo append, a few microseconds. With 16 cores that section bounds
 * a frontend near 1/(section time) commits per second, and a FLUSH per group commit is shared; with 64 cores the
 * single sequence counter and the lock's cache line become the bottleneck, and hot pages (a structure's root
 * counter, a B+tree's upper nodes when they split) make conflicts grow with the number of threads. The next steps
 * would be per-page locks taken in page order at commit (TL2) with a separate id ticket, or several frontends.
 *
 * <p>{@code -Dasymnvm.optimistic-writers=false} turns this path off (every writer under the lock, as before), to
 * compare.
 */
final class OptimisticWriters {
    /** Conflicts of one call before it runs under the lock. */
    static final int MAX_CONFLICTS = 8;
    /** Calls of a method that run under the lock after one of its calls needed the lock. */
    static final int LOCKED_AFTER_NEED = 8;

    static final boolean ENABLED = Boolean.parseBoolean(System.getProperty("asymnvm.optimistic-writers", "true"));

    /**
     * Test hook (package-private): with false, commits skip the validation, which loses updates; a test proves it
     * does, so that the validation is known to matter. Never false outside that test.
     */
    static volatile boolean validateForTest = true;

    private final TransactionEngine engine;
    private final Executor executor;
    /** Per registered method (by hash): calls left to run under the lock after it needed the lock. */
    private final Map<Long, Integer> lockedCalls = new ConcurrentHashMap<>();

    private final LongAdder attempts = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder fallbacks = new LongAdder();
    private final LongAdder committed = new LongAdder();
    private final CommitSections sections = new CommitSections();

    OptimisticWriters(TransactionEngine engine, Executor executor) {
        this.engine = engine;
        this.executor = executor;
    }

    /** Whether the call should try this path (enabled, not the naive baseline, not recently needing the lock). */
    boolean eligible(MethodRegistry.Entry entry) {
        if (!ENABLED || engine.naive != null) {
            return false;
        }
        Integer left = lockedCalls.get(entry.hash());
        if (left == null) {
            return true;
        }
        if (left <= 1) {
            lockedCalls.remove(entry.hash());
        } else {
            lockedCalls.put(entry.hash(), left - 1); // approximate under races: a hint, never a decision
        }
        return false;
    }

    /**
     * Runs the call optimistically; returns its result, or {@link LocklessReads#LOCKED} if it must run under the
     * lock. {@code record} is the semantic record it logs; every attempt decodes its arguments afresh.
     */
    Object tryRun(MethodRegistry.Entry entry, byte[] record, CallPages callPages)
            throws Throwable {
        PageCache cache = engine.cache;
        CacheSequence sequence = cache.sequence();
        int conflicted = 0;
        while (true) {
            engine.checkUsable();
            long seen = sequence.stable(LocklessReads.MAX_STABLE_WAIT_NANOS);
            RetrySignal retry = null;
            Object result = null;
            Throwable failure = null;
            TransactionContext tx = null;
            long txId = -1;
            if (seen < 0) {
                retry = STILL_CHANGING;
            } else {
                Object[] attemptArgs = executor.decodeArguments(entry, record, null);
                callPages.validate(cache);
                tx = TransactionContext.optimistic(engine, callPages, seen);
                callPages.beginRun(tx);
                attempts.increment();
                Executor.BodyRun run = Executor.runBody(entry, attemptArgs, tx, callPages);
                result = run.result();
                failure = run.failure();
                retry = run.retry();
                if (retry == null && failure == null && !tx.hasWrites() && !tx.stillValid()) {
                    retry = CHANGED_AT_END; // a read-only outcome returns without the lock: valid to its end
                }
            }
            boolean readOnlyOutcome = retry == null && failure == null && !tx.hasWrites();
            if (retry == null && !readOnlyOutcome) {
                long asked = System.nanoTime();
                engine.exec.lock();
                long acquired = System.nanoTime();
                try {
                    if (engine.successor != null) {
                        throw new Superseded(engine.successor); // nothing logged: runs again there
                    }
                    engine.readers.applyDeferred(cache);
                    if (validateForTest && !tx.validateReadSet()) {
                        retry = INVALID_AT_COMMIT;
                    } else if (failure == null) {
                        long id = engine.commit.logAndApply(entry, record, tx);
                        if (id < 0) {
                            retry = new RetrySignal(RetrySignal.Reason.RING_FULL, -1);
                        } else {
                            txId = id;
                        }
                    }
                } finally {
                    sections.record(asked, acquired, System.nanoTime());
                    engine.exec.unlock();
                }
            }
            if (retry == null) {
                if (failure != null) {
                    engine.aborts.incrementAndGet(); // validated: the outcome of the state as of a commit point
                    throw failure;
                }
                if (readOnlyOutcome) {
                    engine.readOnly.incrementAndGet();
                    engine.readers.learn(entry, true);
                    engine.commit.awaitDurable(tx.newestDirtyRead());
                    return result;
                }
                committed.increment();
                return executor.finishCommit(entry, null, txId, tx, result);
            }
            engine.retries.incrementAndGet();
            switch (retry.reason) {
                case CONFLICT -> {
                    conflicts.increment();
                    if (++conflicted >= MAX_CONFLICTS) {
                        fallbacks.increment();
                        return LocklessReads.LOCKED;
                    }
                }
                case PAGE_MISS, NEED_SLAB, RING_FULL -> {
                    executor.handle(retry, callPages);
                    if (callPages.hasKept()) {
                        // the cache could not take every fetched page (smaller than the call's pages): a page
                        // kept aside has no version to validate, so the next attempt would only ask for the lock
                        fallbacks.increment();
                        return LocklessReads.LOCKED;
                    }
                }
                default -> { // LOCK_NEEDED (and nothing else is raised here): the locked path knows how
                    fallbacks.increment();
                    lockedCalls.put(entry.hash(), LOCKED_AFTER_NEED);
                    return LocklessReads.LOCKED;
                }
            }
        }
    }

    private static final RetrySignal STILL_CHANGING = new RetrySignal(RetrySignal.Reason.CONFLICT, -1);
    private static final RetrySignal CHANGED_AT_END = new RetrySignal(RetrySignal.Reason.CONFLICT, -1);
    private static final RetrySignal INVALID_AT_COMMIT = new RetrySignal(RetrySignal.Reason.CONFLICT, -1);

    long attempts() {
        return attempts.sum();
    }

    long conflicts() {
        return conflicts.sum();
    }

    long fallbacks() {
        return fallbacks.sum();
    }

    /** The commit sections' hold and wait times. */
    CommitSections sections() {
        return sections;
    }

    long committed() {
        return committed.sum();
    }
}
