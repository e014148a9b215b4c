package io.asymnvm.frontend.tx;

import io.asymnvm.frontend.cache.PageCache;

import java.util.Map;

/**
 * Pages fetched for one call, kept across its retries. A page stays valid while the cache has neither been
 * invalidated nor evicted a once-dirty copy of that page since it was fetched ({@link PageCache#stale}); a stale
 * one is dropped and fetched again. The eviction of another page's once-dirty copy does not drop it: with a cache
 * smaller than one transaction's pages, installing the call's own fetches evicts such pages all the time.
 */
final class CallPages {
    /** Null until a page is kept (a call that hits the cache never needs the maps). */
    private Map<Long, byte[]> pages;
    private Map<Long, Long> tokens;
    private int runs;
    private int doomedRuns;

    /**
     * One more attempt of the call (locked, lockless or optimistic): counted, and collecting its misses while the
     * call has made fewer than {@link Executor#COLLECTING_RUNS} doomed runs ({@link MissCollector}).
     */
    void beginRun(TransactionContext tx) {
        runs++;
        if (doomedRuns < Executor.COLLECTING_RUNS) {
            tx.collectMisses();
        }
    }

    int runs() {
        return runs;
    }

    /** One more collecting attempt that missed pages ({@link MissCollector}). */
    void countDoomed() {
        doomedRuns++;
    }

    int doomedRuns() {
        return doomedRuns;
    }

    void keep(long pageIndex, byte[] page, long fetchToken) {
        if (pages == null) {
            pages = new java.util.HashMap<>();
            tokens = new java.util.HashMap<>();
        }
        pages.put(pageIndex, page);
        tokens.put(pageIndex, fetchToken);
    }

    /** Drops the kept pages that {@code cache} says may be stale. */
    void validate(PageCache cache) {
        if (pages == null || pages.isEmpty()) {
            return;
        }
        tokens.entrySet().removeIf(e -> {
            if (cache.stale(e.getKey(), e.getValue())) {
                pages.remove(e.getKey());
                return true;
            }
            return false;
        });
    }

    /** Whether a kept page may have become stale since it was kept (a lockless attempt checks at each use). */
    boolean stale(long pageIndex, PageCache cache) {
        Long token = tokens == null ? null : tokens.get(pageIndex);
        return token == null || cache.stale(pageIndex, token);
    }

    /** Whether pages the cache did not take are kept aside for this call. */
    boolean hasKept() {
        return pages != null && !pages.isEmpty();
    }

    byte[] get(long pageIndex) {
        return pages == null ? null : pages.get(pageIndex);
    }
}
