package io.asymnvm.core.logging;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RateLimitedLogTest {

    @Test
    void shouldWriteOneLinePerIntervalAndCountTheRestInTheNextLine() {
        List<String> lines = new ArrayList<>();
        AtomicLong clock = new AtomicLong(5);
        RateLimitedLog log = new RateLimitedLog((line, t) -> lines.add(line), clock::get, 1_000);
        for (int i = 0; i < 10_000; i++) {
            log.log("refused {}", i);
        }
        assertEquals(List.of("refused 0"), lines);
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(999));
        assertTrue(!log.log("refused {}", 10_000), "still inside the interval");
        clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1));
        assertTrue(log.log("refused {}", 10_001));
        assertEquals("refused 10001; 10000 more like this suppressed since the last such line", lines.get(1));
        clock.addAndGet(TimeUnit.SECONDS.toNanos(5));
        log.log("refused {}", 10_002);
        assertEquals("refused 10002", lines.get(2), "nothing suppressed since the previous line");
        assertEquals(3, log.lines());
        assertEquals(10_000, log.suppressed());
    }

    @Test
    void shouldPassTheThrowableAndRefuseABadInterval() {
        List<Throwable> thrown = new ArrayList<>();
        RateLimitedLog log = new RateLimitedLog((line, t) -> thrown.add(t), System::nanoTime, 1_000);
        IllegalStateException e = new IllegalStateException("boom");
        log.log("request failed on session {}", 7, e);
        assertSame(e, thrown.get(0));
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> new RateLimitedLog((line, t) -> { }, System::nanoTime, 0));
        assertTrue(bad.getMessage().contains("0 ms"), bad.getMessage());
    }
}
