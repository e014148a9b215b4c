package io.asymnvm.frontend.cache;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cache epoch that fetch tokens are taken from, and <em>which page</em> each advance concerns, so that a fetch
 * is refused only when its own page may have changed while it was on the wire.
 *
 * <p>Two kinds of advance. An invalidation (a reconnect, a slab grant or return) concerns every page: a fetch that
 * started before it is stale whatever its page. The eviction of a once-dirty page concerns that page only: its
 * cached copy held writes that a READ posted before they were applied does not carry, and nothing else. Before this
 * split every once-dirty eviction refused every fetch in flight; with a cache smaller than one transaction's pages,
 * installing a batch of fetched pages evicted once-dirty pages, which refused the rest of the same batch and the pages
 * the call kept aside, so the call missed them again: the hash map's 100,000-key load with a 4 MiB cache ran about
 * 54 times per transaction.
 *
 * <p>Evictions are remembered per page, the newest {@value #MAX_REMEMBERED} of them; a token older than the
 * newest one forgotten is refused for every page (the old, conservative rule), so the log never grows unbounded.
 *
 * <p>Threads: evictions are recorded from whatever thread Caffeine runs its maintenance on (a lockless reader's
 * included), so every method synchronises on this object. Caffeine calls its eviction listener before the evicted
 * entry disappears from the map, so a caller that no longer finds a page there finds its eviction here.
 */
final class FetchEpochs {
    static final int MAX_REMEMBERED = 1 << 16;

    private long epoch;
    /** The epoch of the newest invalidation of every page. */
    private long invalidatedAt;
    /** The epoch of the newest eviction forgotten: tokens older than it are refused for every page. */
    private long forgottenAt;
    /** Page index → epoch of its newest once-dirty eviction, oldest first. */
    private final LinkedHashMap<Long, Long> evictedAt = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Long> eldest) {
            if (size() > MAX_REMEMBERED) {
                forgottenAt = Math.max(forgottenAt, eldest.getValue());
                return true;
            }
            return false;
        }
    };

    /** The token for a fetch starting now. */
    synchronized long token() {
        return epoch;
    }

    /** Every page changed (ownership, reconnect): every fetch in flight is stale. */
    synchronized void invalidateAll() {
        invalidatedAt = ++epoch;
    }

    /** A once-dirty copy of {@code pageIndex} left the cache: a fetch of that page in flight may predate it. */
    synchronized void evictedOnceDirty(long pageIndex) {
        evictedAt.remove(pageIndex); // re-inserted last, so the eldest entry stays the oldest eviction
        evictedAt.put(pageIndex, ++epoch);
    }

    /** Whether an image of {@code pageIndex} fetched with {@code token} may be older than what the cache dropped. */
    synchronized boolean stale(long pageIndex, long token) {
        if (token < invalidatedAt || token < forgottenAt) {
            return true;
        }
        Long evicted = evictedAt.get(pageIndex);
        return evicted != null && token < evicted;
    }
}
