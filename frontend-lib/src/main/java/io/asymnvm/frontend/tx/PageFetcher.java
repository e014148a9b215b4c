package io.asymnvm.frontend.tx;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.layout.RegionIds;
import io.asymnvm.frontend.cache.PageCache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Page misses (DESIGN §3): reads a missed page, with read-ahead over the pages after it that this frontend owns,
 * outside the execution lock, and installs them in the page cache under it, unless a once-dirty page was evicted
 * meanwhile (the cache's fetch token), in which case the read is repeated.
 *
 * <p><b>Batches</b> (issue 8 goal 4). The misses a collecting attempt recorded ({@link MissCollector}) are fetched
 * together by {@link #fetchAll}: adjacent pages, and pages at most the read-ahead window apart, are merged into
 * runs of at most {@value #MAX_RUN_PAGES} pages, each run one READ, all posted before the first is awaited (at
 * most {@value #MAX_IN_FLIGHT} in flight), so k missed pages cost one round-trip time and ceil(k / 64) READs when
 * they are adjacent.
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

    static final int MAX_RUN_PAGES = 64;
    static final int MAX_IN_FLIGHT = 16;

    /**
     * Fetches the misses of a collecting attempt in one batch and keeps them for the call's next attempt. A READ
     * that fails reconnects (or throws) like every other operation; what was not installed is missed again by the
     * next attempt. In the coherence check mode a page of a run that is cached clean is compared with what was read.
     */
    void fetchAll(long[] missed, CallPages callPages) {
        long generation = engine.link.generation();
        long token;
        List<long[]> runs;
        byte[][][] cleanBefore = null;
        engine.exec.lock();
        try {
            token = engine.cache.fetchToken();
            engine.readers.applyDeferred(engine.cache);
            runs = plan(missed);
            if (engine.options.verifyCache()) {
                cleanBefore = new byte[runs.size()][][];
                for (int i = 0; i < runs.size(); i++) {
                    long[] run = runs.get(i);
                    cleanBefore[i] = new byte[(int) run[1]][];
                    for (int k = 0; k < run[1]; k++) {
                        cleanBefore[i][k] = engine.cache.cleanImage(run[0] + k);
                    }
                }
            }
        } finally {
            engine.exec.unlock();
        }
        int pageSize = engine.pageSize;
        byte[][] images = new byte[runs.size()][];
        for (int first = 0; first < runs.size(); first += MAX_IN_FLIGHT) {
            int last = Math.min(runs.size(), first + MAX_IN_FLIGHT);
            Completion[] reads = new Completion[last - first];
            try {
                for (int i = first; i < last; i++) {
                    long[] run = runs.get(i);
                    reads[i - first] = engine.link.read(RegionIds.HEAP, run[0] * pageSize,
                            (int) (run[1] * pageSize));
                }
                for (int i = first; i < last; i++) {
                    images[i] = reads[i - first].await(engine.waitPolicy).bytes();
                    engine.fetchRoundTrips.incrementAndGet();
                }
            } catch (AsymNvmException e) {
                engine.recovery.recoverOrThrow(e, generation);
                return; // reconnected: the next attempt misses what is not cached and fetches it again
            }
        }
        engine.exec.lock();
        try {
            for (int i = 0; i < runs.size(); i++) {
                long[] run = runs.get(i);
                for (int k = 0; k < run[1]; k++) {
                    long pageIndex = run[0] + k;
                    if (cleanBefore != null) {
                        engine.coherence.compareClean(pageIndex, cleanBefore[i][k], images[i], k * pageSize,
                                "on a fetch");
                    }
                    byte[] page = Arrays.copyOfRange(images[i], k * pageSize, (k + 1) * pageSize);
                    PageCache.Insert result = engine.cache.insertFetched(pageIndex, page, token);
                    if ((result == PageCache.Insert.INSERTED || result == PageCache.Insert.NOT_OWNED)
                            && Arrays.binarySearch(missed, pageIndex) >= 0) {
                        callPages.keep(pageIndex, page, token); // kept even if the cache evicts it at once
                    }
                }
            }
        } finally {
            engine.exec.unlock();
        }
    }

    /**
     * Under the lock: the READs for {@code missed} (ascending) as {first page, page count} runs. Pages the cache
     * holds by now are skipped. A run grows over owned pages only (a page outside this frontend's slabs is read
     * alone, as {@link #readAheadWindow} does), bridges gaps up to the read-ahead window, and ends with up to the
     * read-ahead window after its last missed page.
     */
    private List<long[]> plan(long[] missed) {
        long heapPages = engine.heapSize / engine.pageSize;
        int window = Math.max(1, engine.options.readAheadPages());
        List<long[]> runs = new ArrayList<>();
        long start = -1;
        long end = -1; // exclusive, after the last missed page of the run
        for (long p : missed) {
            if (p < 0 || p >= heapPages || engine.cache.peek(p) != null) {
                continue;
            }
            boolean owned = engine.cache.owns(p);
            if (start >= 0 && owned && p - end < window && p + 1 - start <= MAX_RUN_PAGES
                    && ownedRange(end, p)) {
                end = p + 1;
                continue;
            }
            if (start >= 0) {
                runs.add(new long[] {start, withReadAhead(start, end, p, heapPages, window) - start});
            }
            start = p;
            end = p + 1;
            if (!owned) {
                runs.add(new long[] {start, 1});
                start = -1;
            }
        }
        if (start >= 0) {
            runs.add(new long[] {start, withReadAhead(start, end, Long.MAX_VALUE, heapPages, window) - start});
        }
        return runs;
    }

    private boolean ownedRange(long from, long to) {
        for (long q = from; q < to; q++) {
            if (!engine.cache.owns(q)) {
                return false;
            }
        }
        return true;
    }

    /** The end of a run {@code [start, end)} extended over owned pages, before {@code next} and the limits. */
    private long withReadAhead(long start, long end, long next, long heapPages, int window) {
        long limit = Math.min(Math.min(end + window - 1, start + MAX_RUN_PAGES), Math.min(next, heapPages));
        while (end < limit && engine.cache.owns(end)) {
            end++;
        }
        return end;
    }
}
