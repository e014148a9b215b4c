package io.asymnvm.frontend.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The page cache's table of cache-hit answers ({@link HotPages}): a repeated hit is answered without the maps (the
 * same {@code Page} object, nothing allocated), and never once what the maps would answer has changed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HotPagesTest {
    private static final int PAGE = 4096;

    private final PageCache cache = new PageCache(PAGE, 64L * PAGE);

    private static byte[] page(int fill) {
        byte[] b = new byte[PAGE];
        Arrays.fill(b, (byte) fill);
        return b;
    }

    @Test
    void shouldAnswerARepeatedHitWithTheSamePageAndNoAllocation() {
        cache.insertFetched(3, page(3), cache.fetchToken());
        PageCache.Page first = cache.get(3);
        assertSame(first, cache.get(3), "a hit is the page made at insert, not a new view");
        assertSame(first, cache.get(3));
        cache.putDirty(7, page(7), 5);
        assertSame(cache.get(7), cache.get(7), "a dirty page too");
        assertEquals(5, cache.hits(), "hits answered by the table still count");
    }

    @Test
    void shouldNeverAnswerWhatTheMapsNoLongerHold() {
        cache.insertFetched(1, page(1), cache.fetchToken());
        assertArrayEquals(page(1), cache.get(1).bytes());
        assertArrayEquals(page(1), cache.get(1).bytes()); // now in the table

        cache.putDirty(1, page(11), 9); // a single-page install is a section of its own
        PageCache.Page dirty = cache.get(1);
        assertArrayEquals(page(11), dirty.bytes(), "the install retired the table's answer");
        assertEquals(9, dirty.lastWriter());
        assertEquals(9, cache.get(1).lastWriter());

        cache.unpin(9); // not a section: same bytes, the page is clean now
        assertEquals(0, cache.get(1).lastWriter(), "an applied page names no unapplied writer, from the table too");
        assertArrayEquals(page(11), cache.get(1).bytes());

        cache.putDirty(Map.of(1L, page(21), 2L, page(22)), 10);
        assertArrayEquals(page(21), cache.get(1).bytes());
        assertArrayEquals(page(22), cache.get(2).bytes());
        cache.unpin(10);

        cache.invalidateRange(1, 1);
        assertNull(cache.get(1), "a change of ownership drops the page, and its answer");
        assertArrayEquals(page(22), cache.get(2).bytes());
        cache.invalidateClean();
        assertNull(cache.get(2));
    }

    @Test
    void shouldTellAPreferenceMadeAfterThePageWasAnswered() {
        cache.insertFetched(4, page(4), cache.fetchToken());
        cache.get(4);
        cache.get(4);
        assertEquals(false, cache.isPreferred(4));
        cache.prefer(4);
        assertTrue(cache.isPreferred(4));
        cache.get(4);
        assertTrue(cache.isPreferred(4), "the new answer carries the preference");
        assertArrayEquals(page(4), cache.get(4).bytes());
    }

    /**
     * One writer installs ever newer images of two pages, as commits do (under the execution lock, one thread),
     * publishing each number after its install; readers look the pages up all the while. A reader that saw number
     * k published must never get an image older than k from either page (a stale answer of the table would be).
     */
    @Test
    void shouldNeverServeAnImageOlderThanTheLastFinishedInstallToConcurrentReaders() throws Exception {
        int installs = 20_000;
        int readers = 2;
        java.util.concurrent.atomic.AtomicLong committed = new java.util.concurrent.atomic.AtomicLong();
        AtomicReference<String> failure = new AtomicReference<>();
        cache.putDirty(Map.of(1L, numbered(0), 2L, numbered(0)), 1);
        Thread[] threads = new Thread[readers];
        for (int r = 0; r < readers; r++) {
            threads[r] = new Thread(() -> {
                long reads = 0;
                while (failure.get() == null && reads < 5_000_000) {
                    long k = committed.get();
                    for (long p = 1; p <= 2; p++) {
                        PageCache.Page got = cache.get(p);
                        long n = got == null ? -1 : number(got.bytes());
                        if (n < k) {
                            failure.compareAndSet(null, "page " + p + " answered image " + n + " after install "
                                    + k + " had finished");
                        }
                    }
                    reads++;
                    if (k == installs) {
                        return;
                    }
                }
            }, "hot-pages-reader-" + r);
            threads[r].start();
        }
        for (int k = 1; k <= installs && failure.get() == null; k++) {
            cache.putDirty(Map.of(1L, numbered(k), 2L, numbered(k)), k + 1);
            if (k % 3 == 0) {
                cache.unpin(k); // applied pages move to the clean cache meanwhile, as the shipper does
            }
            committed.set(k);
        }
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        assertNull(failure.get());
        assertEquals(installs, committed.get());
    }

    private static byte[] numbered(long k) {
        byte[] b = new byte[PAGE];
        java.nio.ByteBuffer.wrap(b).putLong(k);
        return b;
    }

    private static long number(byte[] page) {
        return java.nio.ByteBuffer.wrap(page).getLong();
    }
}
