package io.asymnvm.frontend.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which fetches a cache change refuses ({@link FetchEpochs}): the eviction of a once-dirty page refuses fetches of
 * that page only, an invalidation refuses every fetch, and a token older than what the log remembers is refused.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FetchEpochsTest {
    private static final int PAGE = 4096;

    private static byte[] page(int fill) {
        byte[] b = new byte[PAGE];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    @Test
    void shouldRefuseOnlyTheEvictedPageAfterAOnceDirtyEviction() {
        PageCache cache = new PageCache(PAGE, 16L * PAGE);
        long inFlight = cache.fetchToken(); // fetches of pages 5 and 6 leave now
        cache.putDirty(5, page(55), 1);
        cache.unpin(1);
        long p = 10_000;
        while (cache.fetchToken() == inFlight && p < 110_000) { // churn until the once-dirty page 5 is evicted
            cache.insertFetched(p, page(1), cache.fetchToken());
            cache.get(p);
            cache.get(p);
            p++;
        }
        assertNotEquals(inFlight, cache.fetchToken(), "page 5, once dirty, was evicted");
        assertEquals(PageCache.Insert.STALE, cache.insertFetched(5, page(0), inFlight),
                "the fetch of page 5 may predate tx 1's write: refused");
        assertTrue(cache.stale(5, inFlight));
        assertFalse(cache.stale(6, inFlight), "page 6 was never dirty: its fetch is current");
        assertEquals(PageCache.Insert.INSERTED, cache.insertFetched(6, page(6), inFlight));
        assertFalse(cache.stale(5, cache.fetchToken()), "a fetch of page 5 started after the eviction is current");
    }

    @Test
    void shouldRefuseEveryPageAfterAnInvalidation() {
        PageCache cache = new PageCache(PAGE, 16L * PAGE);
        long inFlight = cache.fetchToken();
        cache.invalidateRange(100, 4);
        assertTrue(cache.stale(7, inFlight), "an ownership change refuses fetches of every page");
        assertEquals(PageCache.Insert.STALE, cache.insertFetched(7, page(7), inFlight));
        long later = cache.fetchToken();
        cache.invalidateClean();
        assertTrue(cache.stale(8, later));
    }

    @Test
    void shouldRefuseTokensOlderThanTheEvictionsItRemembers() {
        FetchEpochs epochs = new FetchEpochs();
        long old = epochs.token();
        epochs.evictedOnceDirty(1);
        long afterFirst = epochs.token();
        for (long page = 2; page <= FetchEpochs.MAX_REMEMBERED + 1; page++) {
            epochs.evictedOnceDirty(page);
        }
        assertTrue(epochs.stale(1, old), "page 1's eviction was forgotten, but a token from before it is refused");
        assertTrue(epochs.stale(999_999_999L, old), "forgotten evictions refuse every page for older tokens");
        assertFalse(epochs.stale(999_999_999L, afterFirst), "the log still covers tokens after the forgotten one");
        assertTrue(epochs.stale(FetchEpochs.MAX_REMEMBERED + 1, afterFirst), "a remembered eviction refuses");
    }
}
