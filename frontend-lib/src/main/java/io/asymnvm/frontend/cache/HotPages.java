package io.asymnvm.frontend.cache;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A direct-mapped table in front of the page cache's maps, for cache-hit reads (issue 8, goals 1 and 2): a lookup
 * of a page found here costs one array read and two compares, with no boxed key, no concurrent-map probe, no
 * Caffeine read buffer (whose striped ring and drain are writes shared by every reader of a hot page) and no
 * allocation. Only the maps decide what is cached; this table remembers the answer they gave.
 *
 * <p><b>Why an entry is never stale.</b> Every change of what {@link PageCache#get} returns is a section of the
 * cache's {@link CacheSequence}, which moves its value (see {@link PageCache}, "Per-page versions"). An entry
 * carries the even sequence value {@code stamp} at which its page was looked up in the maps, and is offered only if
 * the value was still {@code stamp} after the lookup; a lookup here matches only when the value is
 * {@code stamp} now. So an entry holds what the maps held over a span in which nothing changed, and it is used
 * only while nothing has changed since: exactly what the maps would return now. The first change of any page
 * retires every entry at once, without touching the table (values only grow); the next lookup of each page goes to
 * the maps and offers a new entry. What moves a page without a section (an applied page becoming clean, a
 * preference, an eviction) keeps its bytes and version; the cache clears the page's entry then anyway
 * ({@link #forget}), so an entry also agrees on the last writer and on the preference, and the table holds no page
 * the cache evicted, except one offered by a lookup that raced with the eviction (its bytes are still current:
 * nothing changed since; it is gone at the next change or collision). The table is bounded by its slot count.
 *
 * <p><b>Shared writes.</b> A hit writes nothing. A slot is written when a lookup misses it (first use after a
 * change, or a collision of two pages), so readers of hot pages share read-only cache lines in a read-only phase.
 *
 * <p>Thread-safe, lock-free: any thread looks up and offers; a slot holds an immutable entry.
 */
final class HotPages {
    /** Most slots (a power of two): 16 Ki references and as many small entries at most. */
    static final int MAX_SLOTS = 1 << 14;
    /** Fewest slots. */
    static final int MIN_SLOTS = 1 << 6;

    /** A page as the maps returned it while the sequence was {@code stamp}, with its preference then. */
    private record Entry(long pageIndex, long stamp, PageCache.Page page, boolean preferred) {
    }

    private final AtomicReferenceArray<Entry> slots;
    private final int mask;

    /** A table of about one slot per page of a cache of {@code capacityPages} pages, within the bounds above. */
    HotPages(long capacityPages) {
        int n = MIN_SLOTS;
        while (n < MAX_SLOTS && n < capacityPages) {
            n <<= 1;
        }
        this.slots = new AtomicReferenceArray<>(n);
        this.mask = n - 1;
    }

    int slotCount() {
        return mask + 1;
    }

    private int slot(long pageIndex) {
        long h = pageIndex * 0x9E3779B97F4A7C15L; // Fibonacci hashing: neighbouring pages land far apart
        return (int) (h >>> 40) & mask;
    }

    /** The page entered at sequence value {@code now} (even), or null. */
    PageCache.Page get(long pageIndex, long now) {
        Entry e = slots.getAcquire(slot(pageIndex));
        return e != null && e.pageIndex == pageIndex && e.stamp == now ? e.page : null;
    }

    /** Whether the page's entry, current at {@code now}, says it is preferred (false: not known here). */
    boolean preferred(long pageIndex, long now) {
        Entry e = slots.getAcquire(slot(pageIndex));
        return e != null && e.pageIndex == pageIndex && e.stamp == now && e.preferred;
    }

    /**
     * Enters what the maps returned for {@code pageIndex} in a lookup that started at even sequence value
     * {@code stamp}; the caller checked afterwards that the value is still {@code stamp}.
     */
    void offer(long pageIndex, long stamp, PageCache.Page page, boolean preferred) {
        slots.setRelease(slot(pageIndex), new Entry(pageIndex, stamp, page, preferred));
    }

    /** Clears the entry of {@code pageIndex}, if it holds one (a move of the page without a section). */
    void forget(long pageIndex) {
        int i = slot(pageIndex);
        Entry e = slots.getAcquire(i);
        if (e != null && e.pageIndex == pageIndex) {
            slots.compareAndSet(i, e, null);
        }
    }

    /** Clears every entry (the cache dropped its clean pages: free their memory here too). */
    void clear() {
        for (int i = 0; i <= mask; i++) {
            slots.setRelease(i, null);
        }
    }
}
