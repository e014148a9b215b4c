package io.asymnvm.frontend.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The page cache's pinning rules (DESIGN §3), without a backend. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PageCacheTest {
    private static final int PAGE = 4096;
    private static final int CAPACITY_PAGES = 16;

    private final PageCache cache = new PageCache(PAGE, (long) CAPACITY_PAGES * PAGE);

    private static byte[] page(int fill) {
        byte[] b = new byte[PAGE];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    /** Inserts fresh clean pages and reads each a few times, so they win admission against older pages. */
    private int pressure(long firstIndex, int pages) {
        int refused = 0;
        for (long p = firstIndex; p < firstIndex + pages; p++) {
            if (cache.insertFetched(p, page((int) p), cache.fetchToken()) == PageCache.Insert.STALE) {
                refused++;
            }
            for (int i = 0; i < 4; i++) {
                cache.get(p);
            }
        }
        return refused;
    }

    private int cleanPresent(long firstIndex, int pages) {
        int present = 0;
        for (long p = firstIndex; p < firstIndex + pages; p++) {
            if (cache.get(p) != null) {
                present++;
            }
        }
        return present;
    }

    @Test
    void shouldKeepDirtyPagesUnderPressureBeyondCapacity() {
        int dirty = 2 * CAPACITY_PAGES;
        for (int p = 0; p < dirty; p++) {
            cache.putDirty(p, page(p), 100 + p);
        }
        assertEquals(0, pressure(1_000, 10 * CAPACITY_PAGES), "fresh fetches are accepted");

        assertEquals(dirty, cache.dirtyPages());
        for (int p = 0; p < dirty; p++) {
            PageCache.Page got = cache.get(p);
            assertNotNull(got, "dirty page " + p + " evicted");
            assertEquals(100 + p, got.lastWriter());
            assertArrayEquals(page(p), got.bytes());
        }
        assertTrue(cleanPresent(1_000, 10 * CAPACITY_PAGES) <= CAPACITY_PAGES + 1,
                "clean pages stay within the capacity (dirty ones do not count against it)");
    }

    @Test
    void shouldMovePagesToCleanOnlyOnceTheirLastWriterIsApplied() {
        cache.putDirty(1, page(1), 10);
        cache.putDirty(2, page(2), 11);
        cache.putDirty(1, page(3), 12); // page 1 rewritten by a later transaction

        assertEquals(0, cache.unpin(9));
        assertEquals(2, cache.dirtyPages());

        assertEquals(1, cache.unpin(11), "page 2 (last writer 11) moves; page 1 (last writer 12) stays pinned");
        assertEquals(1, cache.dirtyPages());
        assertEquals(0, cache.get(2).lastWriter(), "page 2 is clean now");
        assertArrayEquals(page(2), cache.get(2).bytes());
        assertEquals(12, cache.get(1).lastWriter());
        assertArrayEquals(page(3), cache.get(1).bytes(), "the newest image, not the first one");

        assertEquals(1, cache.unpin(12));
        assertEquals(0, cache.dirtyPages());
        assertEquals(0, cache.get(1).lastWriter());
        assertArrayEquals(page(3), cache.get(1).bytes());
        assertEquals(0, cache.unpin(1_000), "nothing left to move");
    }

    @Test
    void shouldLetUnpinnedPagesBeEvictedUnderPressure() {
        for (int p = 0; p < CAPACITY_PAGES; p++) {
            cache.putDirty(p, page(p), 1 + p);
        }
        cache.unpin(CAPACITY_PAGES);
        assertEquals(0, cache.dirtyPages());

        pressure(1_000, 20 * CAPACITY_PAGES);

        assertTrue(cleanPresent(0, CAPACITY_PAGES) < CAPACITY_PAGES, "some once-dirty page was evicted");
    }

    @Test
    void shouldPreferCachedImagesOverFetchedOnes() {
        cache.putDirty(7, page(7), 3);
        long token = cache.fetchToken();
        assertEquals(PageCache.Insert.ALREADY_CACHED, cache.insertFetched(7, page(0), token),
                "the page is available (the dirty image)");
        assertArrayEquals(page(7), cache.get(7).bytes(), "a fetch never replaces a dirty page");

        cache.unpin(3);
        assertEquals(PageCache.Insert.ALREADY_CACHED, cache.insertFetched(7, page(0), cache.fetchToken()));
        assertArrayEquals(page(7), cache.get(7).bytes(), "nor the clean image of a once-dirty page");

        assertEquals(PageCache.Insert.INSERTED, cache.insertFetched(8, page(8), cache.fetchToken()));
        assertEquals(PageCache.Insert.ALREADY_CACHED, cache.insertFetched(8, page(0), cache.fetchToken()));
        assertArrayEquals(page(8), cache.get(8).bytes(), "a cached page is not replaced by a later fetch");
    }

    @Test
    void shouldRefuseAFetchThatStartedBeforeAOnceDirtyPageWasEvicted() {
        long startedEarly = cache.fetchToken(); // a fetch of page 5 reads the backend before tx 1 is applied
        cache.putDirty(5, page(55), 1);
        cache.unpin(1);
        long beforeEviction = cache.fetchToken();
        assertEquals(startedEarly, beforeEviction, "unpinning alone does not invalidate fetches");

        int inserted = 0;
        while (cache.fetchToken() == beforeEviction && inserted < 100_000) {
            pressure(10_000 + inserted, 8);
            inserted += 8;
        }
        assertNotEquals(beforeEviction, cache.fetchToken(), "the once-dirty page was evicted");
        assertNull(cache.get(5));

        assertEquals(PageCache.Insert.STALE, cache.insertFetched(5, page(0), startedEarly),
                "the stale image (read before tx 1 was applied) must not become the cached page");
        assertNull(cache.get(5));

        long startedLater = cache.fetchToken();
        assertEquals(PageCache.Insert.INSERTED, cache.insertFetched(5, page(55), startedLater),
                "a fetch started after the eviction is fine");
        PageCache.Page now = cache.get(5);
        // Caffeine's admission policy may drop a brand-new entry at once (the engine keeps fetched pages for the
        // running call); if the page is cached, it is the fresh image
        if (now != null) {
            assertArrayEquals(page(55), now.bytes());
        }
    }

    @Test
    void shouldAcceptFetchesWhenOnlyNeverDirtyPagesWereEvicted() {
        long token = cache.fetchToken();
        pressure(0, 20 * CAPACITY_PAGES);
        assertEquals(token, cache.fetchToken(), "evicting pages that were never dirty invalidates no fetch");
        assertEquals(PageCache.Insert.INSERTED, cache.insertFetched(1_000_000, page(1), token));
    }

    @Test
    void shouldKeepPreferredPagesWhileOrdinaryPagesChurn() {
        for (long p = 0; p < 4; p++) {
            cache.insertFetched(p, page((int) p), cache.fetchToken());
            cache.prefer(p);
        }
        pressure(50_000, 40 * CAPACITY_PAGES); // far more ordinary pages than the whole cache holds
        for (long p = 0; p < 4; p++) {
            assertNotNull(cache.get(p), "preferred page " + p + " survived the churn");
            assertArrayEquals(page((int) p), cache.get(p).bytes());
        }
        cache.putDirty(2, page(22), 9);
        cache.unpin(9);
        assertArrayEquals(page(22), cache.get(2).bytes(), "a preferred page written and unpinned stays current");
        pressure(90_000, 40 * CAPACITY_PAGES);
        assertArrayEquals(page(22), cache.get(2).bytes(), "and stays preferred");
    }

    @Test
    void shouldNeverCacheAPageOutsideOwnedMemory() {
        PageCache owned = new PageCache(PAGE, (long) CAPACITY_PAGES * PAGE, p -> p < 100);
        assertEquals(PageCache.Insert.INSERTED, owned.insertFetched(99, page(99), owned.fetchToken()));
        assertEquals(PageCache.Insert.NOT_OWNED, owned.insertFetched(100, page(100), owned.fetchToken()),
                "a page of memory not granted to this frontend may change under it: never cached");
        assertNull(owned.get(100));
        assertNotNull(owned.get(99));
    }

    @Test
    void shouldDropAGrantedRangeAndRefuseFetchesStartedBeforeTheGrant() {
        long[] grantedFrom = {Long.MAX_VALUE};
        PageCache owned = new PageCache(PAGE, (long) CAPACITY_PAGES * PAGE, p -> p < 4 || p >= grantedFrom[0]);
        assertEquals(PageCache.Insert.INSERTED, owned.insertFetched(3, page(3), owned.fetchToken()));
        long inFlight = owned.fetchToken(); // a read-ahead of page 4 leaves before the slab at 4 is granted

        grantedFrom[0] = 4;
        owned.invalidateRange(4, 4);

        assertEquals(PageCache.Insert.STALE, owned.insertFetched(4, page(0), inFlight),
                "the image predates the grant (the backend initialised the slab header after it was read)");
        assertNull(owned.get(4));
        assertNotNull(owned.get(3), "pages outside the range stay");
        assertEquals(PageCache.Insert.INSERTED, owned.insertFetched(4, page(44), owned.fetchToken()));
        assertArrayEquals(page(44), owned.get(4).bytes());

        owned.invalidateRange(4, 1);
        assertNull(owned.get(4), "a returned slab's pages are dropped");
    }

    @Test
    void shouldRefuseAnOwnershipChangeOverADirtyPage() {
        cache.putDirty(12, page(12), 5);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> cache.invalidateRange(10, 4));
        assertTrue(e.getMessage().contains("page 12") && e.getMessage().contains("tx 5"), e.getMessage());
    }

    @Test
    void shouldDropCleanPagesAndOutdateFetchesOnReconnect() {
        cache.insertFetched(1, page(1), cache.fetchToken());
        cache.putDirty(2, page(2), 7);
        long inFlight = cache.fetchToken();
        cache.invalidateClean();
        assertNull(cache.get(1));
        assertArrayEquals(page(2), cache.get(2).bytes(), "dirty pages are the only current copy: kept");
        assertEquals(PageCache.Insert.STALE, cache.insertFetched(3, page(3), inFlight));
    }
}
