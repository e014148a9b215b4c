package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.CacheIncoherentException;

/**
 * The coherence check mode ({@code FrontendOptions.verifyCache}): compares pages the cache holds clean with the
 * backend's image, at fetches, at checkpoints (pages that just became clean) and in a sweep at {@code sync()}.
 * A difference stops the frontend with a {@link CacheIncoherentException}. Off by default: nothing here runs.
 *
 * <p>Threads: the agent and {@code sync()} callers, serialised on {@code verifyLock} (before {@code exec}).
 */
final class CoherenceCheck {

    private final TransactionEngine engine;

    CoherenceCheck(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * Coherence check (under the lock): if the clean image {@code before} is still the cached one, it must equal
     * the backend's bytes. Identity matters: a page written or re-fetched since is a new array and is skipped,
     * because the backend image read meanwhile may legitimately be older or newer than it.
     */
    void compareClean(long pageIndex, byte[] before, byte[] backend, int at, String when) {
        if (before == null || engine.cache.cleanImage(pageIndex) != before) {
            return;
        }
        int diff = java.util.Arrays.mismatch(before, 0, engine.pageSize, backend, at, at + engine.pageSize);
        if (diff >= 0) {
            CacheIncoherentException e = new CacheIncoherentException(engine.frontendId, pageIndex,
                    pageIndex * engine.pageSize,
                    engine.cache.lastWriter(pageIndex), engine.appliedTxId, diff, before[diff], backend[at
                            + diff], when);
            engine.fatal = e;
            throw e;
        }
    }

    /**
     * Coherence check mode: compares each listed page that is still cached clean with the backend's image (reads
     * runs of adjacent pages together, outside the lock). Pages are listed at checkpoints (they just became
     * clean: the backend applied their last writer) and by {@link #sync()} (every clean page).
     */
    void verifyClean(long[] pages, String when) {
        int i = 0;
        while (i < pages.length) {
            int n = 1;
            while (i + n < pages.length && n < 64 && pages[i + n] == pages[i] + n) {
                n++;
            }
            long first = pages[i];
            int count = n;
            i += n;
            long generation = engine.link.generation();
            byte[][] before = new byte[count][];
            engine.exec.lock();
            try {
                for (int k = 0; k < count; k++) {
                    before[k] = engine.cache.cleanImage(first + k);
                }
            } finally {
                engine.exec.unlock();
            }
            byte[] run;
            try {
                run = engine.link.read(RegionIds.HEAP, first * engine.pageSize,
                        count * engine.pageSize).await(engine.waitPolicy).bytes();
                engine.verifyReads.incrementAndGet();
            } catch (AsymNvmException e) {
                engine.recovery.recoverOrThrow(e, generation);
                continue; // reconnected: every clean page was dropped, nothing of this run is left to compare
            }
            engine.exec.lock();
            try {
                for (int k = 0; k < count; k++) {
                    compareClean(first + k, before[k], run, k * engine.pageSize, when);
                }
            } finally {
                engine.exec.unlock();
            }
        }
    }

    /**
     * Checks the pages that became clean at checkpoints since the last call (coherence check mode only). Under
     * {@code verifyLock}, so that a sweep at {@code sync()} waits for a checkpoint's check in flight and a
     * difference is reported by the check that owns it.
     */
    void verifyCheckpointed() {
        if (!engine.options.verifyCache()) {
            return;
        }
        synchronized (engine.verifyLock) {
            long[] pages;
            engine.exec.lock();
            try {
                if (engine.toVerify.isEmpty()) {
                    return;
                }
                pages = engine.toVerify.stream().mapToLong(Long::longValue).distinct().sorted().toArray();
                engine.toVerify.clear();
            } finally {
                engine.exec.unlock();
            }
            verifyClean(pages, "after checkpoint (applied tx " + engine.appliedTxId + ")");
        }
    }

    /** At {@code sync()}, once everything is applied: the checkpoints' pages first, then every clean page. */
    void sweep() {
        if (!engine.options.verifyCache()) {
            return;
        }
        verifyCheckpointed(); // what the checkpoints unpinned first, reported as such
        synchronized (engine.verifyLock) {
            engine.checkUsable(); // a check that was in flight may have found a difference meanwhile
            long[] clean;
            engine.exec.lock();
            try {
                clean = engine.cache.cleanPages();
            } finally {
                engine.exec.unlock();
            }
            verifyClean(clean, "by a sweep of every clean page at sync");
        }
    }
}
