package io.asymnvm.frontend.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The frontend's DRAM page cache (DESIGN §3). Clean pages live in a Caffeine cache weighed by bytes. A page
 * written by a transaction whose redo the backend has not applied yet is <em>dirty</em>: it is pinned in a
 * separate map and cannot be evicted, because the backend's copy is older than this frontend's committed
 * writes. When the backend's {@code appliedTxId} passes a page's last writer, the page moves to the clean cache.
 *
 * <p>A page fetched from the backend is inserted only if nothing newer arrived meanwhile: not if the page is
 * cached, and not if a once-dirty page was evicted while the fetch was in flight (the fetch may have read the
 * backend before that page's writes were applied). All mutation happens under the frontend's execution lock.
 */
public final class PageCache {

    private record Dirty(byte[] bytes, long lastWriter) {
    }

    private record Clean(byte[] bytes, boolean onceDirty) {
    }

    private static final int MAX_PREFERRED = 1 << 20;

    private final int pageSize;
    private final Cache<Long, Clean> clean;
    /** Pages marked as preferred (B+tree inner nodes): a quarter of the budget that leaves cannot evict. */
    private final Cache<Long, Clean> preferredCache;
    private final java.util.Set<Long> preferred = new java.util.HashSet<>();
    private final Map<Long, Dirty> dirty = new HashMap<>();
    private final ArrayDeque<long[]> unpinQueue = new ArrayDeque<>();
    private volatile long onceDirtyEvictions;
    private long hits;
    private long misses;

    public PageCache(int pageSize, long capacityBytes) {
        this.pageSize = pageSize;
        long preferredBytes = Math.max(pageSize, capacityBytes / 4);
        this.clean = cleanCache(Math.max(pageSize, capacityBytes - preferredBytes));
        this.preferredCache = cleanCache(preferredBytes);
    }

    private Cache<Long, Clean> cleanCache(long bytes) {
        return Caffeine.newBuilder()
                .maximumWeight(bytes)
                .weigher((Long k, Clean v) -> v.bytes().length)
                .executor(Runnable::run)
                .evictionListener((Long k, Clean v, RemovalCause cause) -> {
                    if (v != null && v.onceDirty()) {
                        onceDirtyEvictions++;
                    }
                })
                .build();
    }

    private Cache<Long, Clean> cacheFor(long pageIndex) {
        return preferred.contains(pageIndex) ? preferredCache : clean;
    }

    private Clean cleanPage(long pageIndex) {
        Clean c = preferredCache.getIfPresent(pageIndex);
        return c != null ? c : clean.getIfPresent(pageIndex);
    }

    /**
     * Gives a page priority (DESIGN §3: B+tree inner nodes outlive leaves): from now on it is kept in a separate
     * quarter of the cache that ordinary pages cannot evict. A DRAM hint only; it never changes what is read.
     */
    public void prefer(long pageIndex) {
        if (!preferred.add(pageIndex)) {
            return;
        }
        if (preferred.size() > MAX_PREFERRED) {
            preferred.clear(); // a runaway hint: fall back to plain LRU-ish behaviour rather than grow
            preferred.add(pageIndex);
        }
        Clean c = clean.getIfPresent(pageIndex);
        if (c != null) {
            clean.invalidate(pageIndex);
            preferredCache.put(pageIndex, c);
        }
    }

    public boolean isPreferred(long pageIndex) {
        return preferred.contains(pageIndex);
    }

    public int pageSize() {
        return pageSize;
    }

    /** Result of a lookup: the page bytes (never to be modified) and its last unapplied writer (0 if clean). */
    public record Page(byte[] bytes, long lastWriter) {
    }

    /** The cached page, or null on a miss. */
    public Page get(long pageIndex) {
        Dirty d = dirty.get(pageIndex);
        if (d != null) {
            hits++;
            return new Page(d.bytes(), d.lastWriter());
        }
        Clean c = cleanPage(pageIndex);
        if (c != null) {
            hits++;
            return new Page(c.bytes(), 0);
        }
        misses++;
        return null;
    }

    /** Installs the new image of a page written by committed transaction {@code txId}, pinned until applied. */
    public void putDirty(long pageIndex, byte[] bytes, long txId) {
        dirty.put(pageIndex, new Dirty(bytes, txId));
        clean.invalidate(pageIndex);
        preferredCache.invalidate(pageIndex);
        unpinQueue.add(new long[] {txId, pageIndex});
    }

    /** Token to pass to {@link #insertFetched} for a fetch starting now. */
    public long fetchToken() {
        return onceDirtyEvictions;
    }

    /** What {@link #insertFetched} did with a fetched page. */
    public enum Insert {
        /** The fetched image is the current one (the cache may still evict it at once). */
        INSERTED,
        /** The cache already holds an image of the page; the fetched one was dropped. */
        ALREADY_CACHED,
        /** A once-dirty page was evicted during the fetch: the image may be stale and was dropped. */
        STALE
    }

    /** Inserts a page read from the backend unless a newer image exists or may have existed. */
    public Insert insertFetched(long pageIndex, byte[] bytes, long token) {
        if (dirty.containsKey(pageIndex) || cleanPage(pageIndex) != null) {
            return Insert.ALREADY_CACHED;
        }
        if (token != onceDirtyEvictions) {
            return Insert.STALE;
        }
        cacheFor(pageIndex).put(pageIndex, new Clean(bytes, false));
        return Insert.INSERTED;
    }

    /** Moves every page whose last writer is at most {@code appliedTxId} to the clean cache. */
    public int unpin(long appliedTxId) {
        int moved = 0;
        while (!unpinQueue.isEmpty() && unpinQueue.peekFirst()[0] <= appliedTxId) {
            long[] e = unpinQueue.pollFirst();
            Dirty d = dirty.get(e[1]);
            if (d != null && d.lastWriter() <= appliedTxId) {
                dirty.remove(e[1]);
                cacheFor(e[1]).put(e[1], new Clean(d.bytes(), true));
                moved++;
            }
        }
        return moved;
    }

    public int dirtyPages() {
        return dirty.size();
    }

    public long hits() {
        return hits;
    }

    public long misses() {
        return misses;
    }

    /** Drops every clean page (dirty pages stay: they are the only current copy until applied). */
    public void invalidateClean() {
        clean.invalidateAll();
        preferredCache.invalidateAll();
    }
}
