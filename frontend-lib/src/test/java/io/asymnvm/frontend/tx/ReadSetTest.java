package io.asymnvm.frontend.tx;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class ReadSetTest {

    @Test
    void shouldKeepEachPageOnceAcrossGrowth() {
        long seed = System.nanoTime();
        SplittableRandom random = new SplittableRandom(seed);
        ReadSet set = new ReadSet();
        TreeSet<Long> oracle = new TreeSet<>();
        for (int i = 0; i < 5_000; i++) {
            long page = random.nextLong(2_000);
            set.putIfAbsent(page, i);
            oracle.add(page);
            assertEquals(oracle.size(), set.size(), "seed " + seed);
        }
    }

    @Test
    void shouldRejectANegativePageIndex() {
        assertThrows(IllegalArgumentException.class, () -> new ReadSet().putIfAbsent(-1, 0));
    }
}
