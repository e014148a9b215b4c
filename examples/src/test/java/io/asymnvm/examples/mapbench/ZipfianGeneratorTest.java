package io.asymnvm.examples.mapbench;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(30)
class ZipfianGeneratorTest {

    @Test
    void shouldBeSkewedTowardsTheFirstItems() {
        int items = 1000;
        ZipfianGenerator z = new ZipfianGenerator(items, ZipfianGenerator.DEFAULT_THETA);
        SplittableRandom random = new SplittableRandom(1);
        int[] counts = new int[items];
        int draws = 200_000;
        for (int i = 0; i < draws; i++) {
            long item = z.next(random);
            assertTrue(item >= 0 && item < items, "item " + item);
            counts[(int) item]++;
        }
        // theta 0.99 over 1000 items: item 0 takes ~13%, item 1 about half of that, the top 10% about 70%
        assertTrue(counts[0] > draws / 10 && counts[0] < draws / 6, "item 0 drawn " + counts[0]);
        assertTrue(counts[1] > counts[0] / 3 && counts[1] < counts[0], "item 1 drawn " + counts[1]);
        int top = 0;
        for (int i = 0; i < items / 10; i++) {
            top += counts[i];
        }
        assertTrue(top > draws * 6 / 10, "top 10% drawn " + top);
        assertTrue(counts[items - 1] < counts[0] / 100, "last item drawn " + counts[items - 1]);
    }

    @Test
    void shouldBeReproducibleFromTheSeedAndScrambleWithinRange() {
        ZipfianGenerator z = new ZipfianGenerator(12_345, 0.9);
        SplittableRandom a = new SplittableRandom(99);
        SplittableRandom b = new SplittableRandom(99);
        for (int i = 0; i < 10_000; i++) {
            long x = z.nextScrambled(a);
            assertEquals(x, z.nextScrambled(b));
            assertTrue(x >= 0 && x < 12_345, "item " + x);
        }
        ZipfianGenerator one = new ZipfianGenerator(1, 0.99);
        assertEquals(0, one.nextScrambled(a));
    }

    @Test
    void shouldRefuseBadParameters() {
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(0, 0.99));
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(10, 1.0));
        assertThrows(IllegalArgumentException.class, () -> new ZipfianGenerator(10, 0));
    }
}
