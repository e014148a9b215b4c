package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.cache.PageCache;

/**
 * Page misses (DESIGN §3): reads a missed page, with read-ahead over the pages after it that this frontend owns,
 * outside the execution lock, and installs them in the page cache under it, unless a once-dirty page was evicted
 * meanwhile (the cache's fetch token), in which case the read is repeated.
 *
 * <p>Threads: caller threads between attempts; never holds {@code exec} across the READ.
 */
final class PageFetcher {

    private final TransactionEngine engine;

    PageFetcher(TransactionEngine engine) {
        this.engine = engine;
    }

    /**
     * Fetches a page and installs it in the cache. Returns the image if the calling transaction must keep it
     * aside (it was installed, so the retrying call can keep it even if the cache evicts it at once and a
     * transaction whose pages exceed the cache still finishes; or it lies outside this frontend's slabs and is
     * never cached), null if the cache already had the page.
     */
    byte[] fetch(long pageIndex) {
        while (true) {
            long generation = engine.link.generation();
            long token;
            int pages;
            byte[][] cleanBefore = null;
            engine.exec.lock();
            try {
                token = engine.cache.fetchToken();
                engine.readers.applyDeferred(engine.cache);
                pages = readAheadWindow(pageIndex);
                if (engine.options.verifyCache()) {
                    cleanBefore = new byte[pages][];
                    for (int i = 0; i < pages; i++) {
                        cleanBefore[i] = engine.cache.cleanImage(pageIndex + i);
                    }
                }
            } finally {
                engine.exec.unlock();
            }
            byte[] run;
            try {
                run = engine.link.read(RegionIds.HEAP, pageIndex * engine.pageSize,
                        pages * engine.pageSize).await(engine.waitPolicy).bytes();
                engine.fetchRoundTrips.incrementAndGet();
            } catch (AsymNvmException e) {
                engine.recovery.recoverOrThrow(e, generation);
                continue;
            }
            byte[] page = java.util.Arrays.copyOf(run, engine.pageSize);
            engine.exec.lock();
            try {
                if (cleanBefore != null) {
                    for (int i = 0; i < pages; i++) {
                        engine.coherence.compareClean(pageIndex + i, cleanBefore[i], run, i * engine.pageSize,
                                "on a fetch");
                    }
                }
                for (int i = 1; i < pages; i++) {
                    engine.cache.insertFetched(pageIndex + i,
                            java.util.Arrays.copyOfRange(run, i * engine.pageSize, (i + 1) * engine.pageSize), token);
                }
                PageCache.Insert result = engine.cache.insertFetched(pageIndex, page, token);
                if (result == PageCache.Insert.INSERTED || result == PageCache.Insert.NOT_OWNED) {
                    return page;
                }
                if (result == PageCache.Insert.ALREADY_CACHED) {
                    return null;
                }
            } finally {
                engine.exec.unlock();
            }
        }
    }

    /**
     * How many pages a miss of {@code pageIndex} reads (under the lock). Read-ahead: the pages after a missed one
     * usually belong to the same structure (node pools are carved from contiguous blocks), and one round trip
     * carries them for little more than one page. It never crosses into memory this frontend does not own: the
     * first page of a slab not yet granted would be cached, and the grant would then initialise the slab under
     * that copy (issue 7). A miss outside owned memory reads that page alone.
     */
    int readAheadWindow(long pageIndex) {
        long heapPages = engine.heapSize / engine.pageSize;
        int limit = (int) Math.max(1, Math.min(engine.options.readAheadPages(), heapPages - pageIndex));
        if (!engine.cache.owns(pageIndex)) {
            return 1;
        }
        int pages = 1;
        while (pages < limit && engine.cache.owns(pageIndex + pages)) {
            pages++;
        }
        return pages;
    }
}
