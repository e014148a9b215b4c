package io.asymnvm.frontend.tx;

/**
 * Abandons the current attempt of a transaction so that the engine can do, outside the execution lock, what
 * needs the network (fetch a page, get a slab, wait for ring space), then run the method again. An
 * {@link Error} so that ordinary {@code catch (Exception e)} blocks in user code do not swallow it; the engine
 * also remembers it on the context, so a swallowed signal still forces the retry.
 */
final class RetrySignal extends Error {
    enum Reason {
        PAGE_MISS, NEED_SLAB, RING_FULL,
        /** A read-only call must commit (it created a named structure): run again as a logged call. */
        RERUN_LOGGED,
        /** A lockless read-only attempt saw the page cache change under it: its view may be mixed, run again. */
        CONFLICT,
        /** A lockless attempt is about to write, allocate or create a root: run again under the lock. */
        WRITES,
        /**
         * An optimistic writer ({@link OptimisticWriters}) is about to do what only the lock may (allocate, free,
         * set a root, use a page the cache does not hold): run again under the lock.
         */
        LOCK_NEEDED
    }

    final Reason reason;
    final long pageIndex;
    /** A collecting attempt's misses, every page it touched and found missing (ascending); null otherwise. */
    final long[] pages;

    RetrySignal(Reason reason, long pageIndex) {
        super(reason.name(), null, false, false);
        this.reason = reason;
        this.pageIndex = pageIndex;
        this.pages = null;
    }

    /** The misses of a collecting attempt ({@link MissCollector}), fetched together before the next attempt. */
    RetrySignal(long[] pages) {
        super(Reason.PAGE_MISS.name(), null, false, false);
        this.reason = Reason.PAGE_MISS;
        this.pageIndex = pages[0];
        this.pages = pages;
    }
}
