package io.asymnvm.frontend.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;

import java.util.ArrayDeque;
import java.util.Map;

/**
 * The frontend's DRAM page cache (DESIGN §3). Clean pages live in a Caffeine cache weighed by bytes. A page
 * written by a transaction whose redo the backend has not applied yet is <em>dirty</em>: it is pinned in a
 * separate map and cannot be evicted, because the backend's copy is older than this frontend's committed
 * writes. When the backend's {@code appliedTxId} passes a page's last writer, the page moves to the clean cache.
 *
 * <p><b>Coherence invariant (DESIGN §6).</b> A page in this cache is either memory this frontend owns and that
 * is current, or it is not here. Three rules make that hold by construction rather than by care at each caller:
 * <ol>
 *   <li><em>Only owned memory is cached.</em> {@link #insertFetched} refuses a page outside the slabs granted to
 *       this frontend ({@link Insert#NOT_OWNED}); such a page serves the one call that fetched it and is gone.
 *       Memory that is not ours may change under us (a grant initialises a slab header on the backend), so no
 *       copy of it may outlive a call. Read-ahead is bounded the same way by the engine.</li>
 *   <li><em>Every change of ownership or state invalidates.</em> A slab grant or return
 *       ({@link #invalidateRange}), a reconnect, recovery or epoch change ({@link #invalidateClean}) drops the
 *       clean pages concerned. Dirty pages are never dropped: they are the only current copy until applied, and
 *       they can only exist in owned memory.</li>
 *   <li><em>Every invalidation advances the cache epoch</em> ({@link #fetchToken}), as does the eviction of a
 *       once-dirty page. A fetch carries the epoch it started in; if an invalidation, or the eviction of a
 *       once-dirty copy of <em>its</em> page, happened while it was on the wire, its image may predate the change
 *       and {@link #insertFetched} drops it ({@link Insert#STALE}; {@link FetchEpochs}). Pages a retrying call
 *       keeps aside are dropped on the same signal ({@link #stale}).</li>
 * </ol>
 * A fetched page is also not inserted if the cache already holds an image of it (that image is as new or
 * newer). All mutation happens under the frontend's execution lock.
 *
 * <p><b>Lockless readers.</b> {@link #get}, {@link #isPreferred} and {@link #fetchToken} may be called without
 * the lock, concurrently with mutation (read-only transactions, validated by the {@link #sequence() change
 * sequence}): the maps are concurrent, a page array is never changed in place (a write installs a new array), and
 * every change of what {@code get} returns is a section of the sequence ({@link #putDirty(Map, long)},
 * {@link #invalidateClean}, {@link #invalidateRange}). Moving a page between the maps (unpin, preference) puts
 * it in its new place before removing it from the old one, so a reader never misses a page that stays cached.
 *
 * <p><b>Per-page versions (issue 8 goal 2).</b> Every cached page carries a {@code version}: the even value the
 * {@link #sequence() change sequence} has at the end of the section that installed it ({@link #putDirty}), or, for
 * a fetched page, the sequence value when it was inserted (its bytes are the newest committed state then). A move
 * between the maps (unpin, preference) keeps the version with the same bytes. So a page's version changes whenever
 * what a read of it returns may change, and a version is never larger than the sequence value once its section
 * ended. An invalidation (a change of ownership, a reconnect) drops pages rather than stamping them; it records the
 * end value of its section in {@link #invalidatedAt()}, which attempts that started before it treat as a conflict.
 * A lockless attempt that started at even sequence value {@code rv} accepts a page only if its version is at most
 * {@code rv} (TL2's read rule): it then sees the state as of {@code rv}, whatever commits meanwhile to other pages.
 * An optimistic writer records the version of every page it read and, under the execution lock, checks that
 * {@link #version(long)} still returns it.
 */
public final class PageCache {

    /**
     * A dirty page; {@code version} is the stamp of its install (see "Per-page versions" above). {@code page} is
     * what {@link #get} returns for it, made once at the install (a cache-hit read allocates nothing).
     */
    private record Dirty(byte[] bytes, long lastWriter, long version, Page page) {
        Dirty(byte[] bytes, long lastWriter, long version) {
            this(bytes, lastWriter, version, new Page(bytes, lastWriter, version));
        }
    }

    /**
     * A clean page; {@code lastWriter} is the transaction that last wrote it while dirty (0: fetched as is), and
     * {@code version} the stamp of the install or fetch that produced these bytes. {@code page} is what
     * {@link #get} returns for it (last writer 0: applied), made once.
     */
    private record Clean(byte[] bytes, long lastWriter, long version, Page page) {
        Clean(byte[] bytes, long lastWriter, long version) {
            this(bytes, lastWriter, version, new Page(bytes, 0, version));
        }

        boolean onceDirty() {
            return lastWriter != 0;
        }
    }

    private static final int MAX_PREFERRED = 1 << 20;

    private final int pageSize;
    private final Cache<Long, Clean> clean;
    /** Pages marked as preferred (B+tree inner nodes): a quarter of the budget that leaves cannot evict. */
    private final Cache<Long, Clean> preferredCache;
    private final java.util.Set<Long> preferred = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final Map<Long, Dirty> dirty = new java.util.concurrent.ConcurrentHashMap<>();
    private final ArrayDeque<long[]> unpinQueue = new ArrayDeque<>();
    private final java.util.function.LongPredicate owned;
    /** Advanced under the lock and by evictions, which Caffeine may run on a lockless reader's thread. */
    private final FetchEpochs epoch = new FetchEpochs();
    private final CacheSequence sequence = new CacheSequence();
    private final java.util.concurrent.atomic.LongAdder hits = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder misses = new java.util.concurrent.atomic.LongAdder();
    /** End value of the sequence section of the last invalidation (see "Per-page versions"). */
    private volatile long invalidatedAt;
    /** Cache-hit reads: the answers of the maps, valid while the sequence stays where they were given. */
    private final HotPages hot;

    /** A cache that treats every page as owned (unit tests of the cache itself). */
    public PageCache(int pageSize, long capacityBytes) {
        this(pageSize, capacityBytes, pageIndex -> true);
    }

    /** {@code owned} tells whether a page lies in memory granted to this frontend; only those are cached. */
    public PageCache(int pageSize, long capacityBytes, java.util.function.LongPredicate owned) {
        this.pageSize = pageSize;
        this.owned = owned;
        long preferredBytes = Math.max(pageSize, capacityBytes / 4);
        this.clean = cleanCache(Math.max(pageSize, capacityBytes - preferredBytes));
        this.preferredCache = cleanCache(preferredBytes);
        this.hot = new HotPages(capacityBytes / pageSize);
    }

    private Cache<Long, Clean> cleanCache(long bytes) {
        return Caffeine.newBuilder()
                .maximumWeight(bytes)
                .weigher((Long k, Clean v) -> v.bytes().length)
                .executor(Runnable::run)
                .evictionListener((Long k, Clean v, RemovalCause cause) -> {
                    hot.forget(k);
                    if (v != null && v.onceDirty()) {
                        epoch.evictedOnceDirty(k);
                    }
                })
                .build();
    }

    /**
     * Drops the clean copy of a page from {@code part} if it holds one. Asked first because Caffeine's invalidate
     * of an absent key is not free (a compute that reserves the key's bin; issue 8: a page lives in one of the two
     * parts, so every page made dirty paid for one). Absent when asked is what invalidate would have found then.
     */
    private static void dropClean(Cache<Long, Clean> part, Long key) {
        if (part.asMap().containsKey(key)) {
            part.invalidate(key);
        }
    }

    private Cache<Long, Clean> cacheFor(long pageIndex) {
        return preferred.contains(pageIndex) ? preferredCache : clean;
    }

    private Clean cleanPage(Long pageIndex) {
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
            preferredCache.put(pageIndex, c); // first the new place: a lockless reader never misses it meanwhile
            clean.invalidate(pageIndex);
        }
        hot.forget(pageIndex); // its next entry says preferred
    }

    public boolean isPreferred(long pageIndex) {
        return hot.preferred(pageIndex, sequence.current()) || preferred.contains(pageIndex);
    }

    public int pageSize() {
        return pageSize;
    }

    /**
     * Result of a lookup: the page bytes (never to be modified), its last unapplied writer (0 if clean) and its
     * version (see "Per-page versions" in the class comment).
     */
    public record Page(byte[] bytes, long lastWriter, long version) {
    }

    /**
     * The cached page, or null on a miss. A page looked up since the last change of the sequence is answered by
     * {@link HotPages} without touching the maps; a lookup in the maps while the sequence is even and stays so is
     * entered there.
     */
    public Page get(long pageIndex) {
        long now = sequence.current();
        boolean stable = (now & 1) == 0;
        if (stable) {
            Page p = hot.get(pageIndex, now);
            if (p != null) {
                hits.increment();
                if ((java.util.concurrent.ThreadLocalRandom.current().nextInt() & RECENCY_SAMPLE_MASK) == 0) {
                    cleanPage(pageIndex); // tell Caffeine's policy now and then that this page is still in use
                }
                return p;
            }
        }
        Long key = pageIndex; // boxed once for the lookups of a hit
        Page found;
        boolean isPreferred = false;
        Dirty d = dirty.get(key);
        if (d != null) {
            found = d.page();
        } else {
            Clean c = preferredCache.getIfPresent(key);
            isPreferred = c != null;
            if (c == null) {
                c = clean.getIfPresent(key);
            }
            found = c == null ? null : c.page();
        }
        if (found == null) {
            misses.increment();
            return null;
        }
        hits.increment();
        if (stable && sequence.current() == now) {
            hot.offer(pageIndex, now, found, isPreferred || (d != null && preferred.contains(key)));
        }
        return found;
    }

    /**
     * A page answered by {@link HotPages} is looked up in Caffeine too once in this many hits on average (a power
     * of two), so its eviction policy keeps seeing that the page is in use.
     */
    private static final int RECENCY_SAMPLE_MASK = 15;

    /** The change sequence lockless readers validate against (see the class comment). */
    public CacheSequence sequence() {
        return sequence;
    }

    /** The version of a cached page, or -1 if it is not cached; counts neither a hit nor a miss. */
    public long version(long pageIndex) {
        Long key = pageIndex; // boxed once for both lookups (an optimistic commit asks for every page it read)
        Dirty d = dirty.get(key);
        if (d != null) {
            return d.version();
        }
        Clean c = cleanPage(key);
        return c == null ? -1 : c.version();
    }

    /** The end value of the sequence section of the last invalidation (0 if none). */
    public long invalidatedAt() {
        return invalidatedAt;
    }

    /** The stamp of a change made now: the even value the sequence has when the (outermost) section ends. */
    private long changeStamp() {
        return (sequence.current() & ~1L) + 2;
    }

    /** The latest cached image of a page, or null; counts neither a hit nor a miss (background checks). */
    public byte[] peek(long pageIndex) {
        Dirty d = dirty.get(pageIndex);
        if (d != null) {
            return d.bytes();
        }
        Clean c = cleanPage(pageIndex);
        return c == null ? null : c.bytes();
    }

    /**
     * Installs the new images of the pages written by committed transaction {@code txId}, pinned until applied,
     * as one change of the sequence: a lockless reader sees all of them or abandons its attempt.
     */
    public void putDirty(Map<Long, byte[]> pages, long txId) {
        sequence.beginChange();
        try {
            for (Map.Entry<Long, byte[]> p : pages.entrySet()) {
                putDirty(p.getKey(), p.getValue(), txId);
            }
        } finally {
            sequence.endChange();
        }
    }

    /**
     * Installs the new image of a page written by committed transaction {@code txId}, pinned until applied. With
     * lockless readers, call it inside a section of the {@link #sequence()} (or use {@link #putDirty(Map, long)}).
     */
    public void putDirty(long pageIndex, byte[] bytes, long txId) {
        sequence.beginChange(); // nested inside a caller's section: only the outermost moves the value
        try {
            Long key = pageIndex; // boxed once for the map operations
            if (dirty.put(key, new Dirty(bytes, txId, changeStamp())) == null) {
                // a page already dirty has no clean copy (unpin makes it clean and no longer dirty in one step,
                // under the same lock as this): only a newly dirty one drops its clean copy (issue 8: a hot page
                // updated again before the backend applied it costs no cache removals)
                dropClean(clean, key);
                dropClean(preferredCache, key);
            }
            unpinQueue.add(new long[] {txId, pageIndex});
        } finally {
            sequence.endChange();
        }
    }

    /**
     * The cache epoch, to pass to {@link #insertFetched} for a fetch starting now. It advances on every
     * invalidation and on every eviction of a once-dirty page: a fetch that started in an older epoch may carry
     * an image older than what the cache has dropped.
     */
    public long fetchToken() {
        return epoch.token();
    }

    /**
     * Whether an image of {@code pageIndex} fetched with {@code token} may be older than what the cache has
     * dropped since: an invalidation, or the eviction of a once-dirty copy of this page ({@link FetchEpochs}).
     * The eviction of another page's once-dirty copy does not make this one stale.
     */
    public boolean stale(long pageIndex, long token) {
        return epoch.stale(pageIndex, token);
    }

    /** The clean image of a page if cached (identity is meaningful: a new image is a new array), else null. */
    public byte[] cleanImage(long pageIndex) {
        Clean c = cleanPage(pageIndex);
        return c == null ? null : c.bytes();
    }

    /** The transaction that last wrote a cached page (dirty or once dirty); 0 if fetched unchanged or absent. */
    public long lastWriter(long pageIndex) {
        Dirty d = dirty.get(pageIndex);
        if (d != null) {
            return d.lastWriter();
        }
        Clean c = cleanPage(pageIndex);
        return c == null ? 0 : c.lastWriter();
    }

    /** Whether a page lies in memory this frontend owns (the only memory this cache keeps). */
    public boolean owns(long pageIndex) {
        return owned.test(pageIndex);
    }

    /** What {@link #insertFetched} did with a fetched page. */
    public enum Insert {
        /** The fetched image is the current one (the cache may still evict it at once). */
        INSERTED,
        /** The cache already holds an image of the page; the fetched one was dropped. */
        ALREADY_CACHED,
        /** An invalidation, or an eviction of this page's once-dirty copy, during the fetch: it may be stale. */
        STALE,
        /** The page is not in memory this frontend owns: never cached (it may change under us). */
        NOT_OWNED
    }

    /** Inserts a page read from the backend unless a newer image exists or may have existed. */
    public Insert insertFetched(long pageIndex, byte[] bytes, long token) {
        if (dirty.containsKey(pageIndex) || cleanPage(pageIndex) != null) {
            return Insert.ALREADY_CACHED;
        }
        if (epoch.stale(pageIndex, token)) {
            return Insert.STALE;
        }
        if (!owned.test(pageIndex)) {
            return Insert.NOT_OWNED;
        }
        long now = sequence.current();
        cacheFor(pageIndex).put(pageIndex, new Clean(bytes, 0, (now + 1) & ~1L)); // the newest state as of now
        return Insert.INSERTED;
    }

    /** Moves every page whose last writer is at most {@code appliedTxId} to the clean cache. */
    public int unpin(long appliedTxId) {
        return unpin(appliedTxId, null);
    }

    /** As {@link #unpin(long)}, telling {@code moved} (if not null) each page index that became clean. */
    public int unpin(long appliedTxId, java.util.function.LongConsumer moved) {
        int count = 0;
        while (!unpinQueue.isEmpty() && unpinQueue.peekFirst()[0] <= appliedTxId) {
            long[] e = unpinQueue.pollFirst();
            Dirty d = dirty.get(e[1]);
            if (d != null && d.lastWriter() <= appliedTxId) {
                // the same bytes: clean first, then no longer dirty, so a lockless reader finds it all along
                cacheFor(e[1]).put(e[1], new Clean(d.bytes(), d.lastWriter(), d.version()));
                dirty.remove(e[1]);
                hot.forget(e[1]); // its next entry names no unapplied writer
                count++;
                if (moved != null) {
                    moved.accept(e[1]);
                }
            }
        }
        return count;
    }

    public int dirtyPages() {
        return dirty.size();
    }

    public long hits() {
        return hits.sum();
    }

    public long misses() {
        return misses.sum();
    }

    /**
     * Drops every clean page and advances the epoch (reconnect, recovery, epoch change). Dirty pages stay: they are
     * the only current copy until applied.
     */
    public void invalidateClean() {
        sequence.beginChange();
        try {
            invalidatedAt = changeStamp();
            epoch.invalidateAll();
            clean.invalidateAll();
            preferredCache.invalidateAll();
            hot.clear(); // retired by the section anyway; frees the pages now
        } finally {
            sequence.endChange();
        }
    }

    /**
     * Ownership of pages {@code [firstPage, firstPage + count)} changed (a slab granted to or returned by this
     * frontend): drops their clean images and advances the epoch, so no fetch that started before the change can
     * install an image from before it. A dirty page there means this frontend wrote memory it did not own: a bug,
     * refused loudly rather than dropped silently.
     */
    public void invalidateRange(long firstPage, long count) {
        sequence.beginChange();
        try {
            invalidatedAt = changeStamp();
            epoch.invalidateAll();
            for (long p = firstPage; p < firstPage + count; p++) {
                if (dirty.containsKey(p)) {
                    throw new IllegalStateException("page " + p + " changes ownership while dirty (last writer tx "
                            + dirty.get(p).lastWriter() + ")");
                }
                clean.invalidate(p);
                preferredCache.invalidate(p);
                preferred.remove(p);
            }
        } finally {
            sequence.endChange();
        }
    }

    /** Every clean page index cached now (coherence sweeps). */
    public long[] cleanPages() {
        java.util.stream.LongStream.Builder b = java.util.stream.LongStream.builder();
        clean.asMap().keySet().forEach(b::add);
        preferredCache.asMap().keySet().forEach(b::add);
        return b.build().sorted().toArray();
    }
}
