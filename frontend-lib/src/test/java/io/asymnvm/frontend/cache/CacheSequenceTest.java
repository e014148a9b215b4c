package io.asymnvm.frontend.cache;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CacheSequenceTest {

    @Test
    void nestedSectionsShouldMoveTheValueOnlyAtTheOutermostPair() {
        CacheSequence s = new CacheSequence();
        long seen = s.stable(0);
        assertEquals(0, seen);
        s.beginChange();
        s.beginChange();
        assertEquals(1, s.current());
        assertEquals(-1, s.stable(TimeUnit.MICROSECONDS.toNanos(50)), "odd while changing: no stable value");
        s.endChange();
        assertEquals(1, s.current(), "still inside the outer section");
        s.endChange();
        assertEquals(2, s.current());
        assertFalse(s.unchanged(seen));
        assertTrue(s.unchanged(s.stable(0)));
        assertThrows(IllegalStateException.class, s::endChange);
    }

    @Test
    void everyChangeOfWhatAReadReturnsShouldMoveTheSequenceAndOthersShouldNot() {
        PageCache cache = new PageCache(4096, 1 << 20);
        CacheSequence s = cache.sequence();
        long v = s.stable(0);
        assertEquals(PageCache.Insert.INSERTED, cache.insertFetched(1, new byte[4096], cache.fetchToken()));
        cache.prefer(1);
        assertTrue(s.unchanged(v), "a fetched page and a preference change no read's result");
        cache.putDirty(Map.of(1L, new byte[4096], 2L, new byte[4096]), 7);
        assertEquals(v + 2, s.current(), "one write set is one change");
        v = s.current();
        cache.unpin(7);
        assertTrue(s.unchanged(v), "an applied page keeps its bytes when it becomes clean");
        assertNotNull(cache.get(1));
        cache.invalidateRange(1, 1);
        assertEquals(v + 2, s.current());
        cache.invalidateClean();
        assertEquals(v + 4, s.current());
    }
}
