package io.asymnvm.recovery.crash;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SimulatedPmRegionTest {
    private static final int SIZE = 64 * 1024;
    private static final int LINE = SimulatedPmRegion.LINE_LENGTH;
    private static final int WORD = SimulatedPmRegion.WORD_LENGTH;

    private static long word(byte[] image, int offset) {
        return ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN).getLong(offset);
    }

    @Test
    void shouldKeepPersistedDataInEveryCrashImage() {
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
            byte[] model = new byte[SIZE];          // the value of every byte as last stored
            boolean[] persistedLine = new boolean[SIZE / LINE];
            for (int op = 0; op < 400; op++) {
                int offset = random.nextInt(SIZE - 256);
                int length = 1 + random.nextInt(255);
                byte[] data = new byte[length];
                random.nextBytes(data);
                region.write(offset, data, 0, length);
                System.arraycopy(data, 0, model, offset, length);
                for (int l = offset / LINE; l <= (offset + length - 1) / LINE; l++) {
                    persistedLine[l] = false;
                }
                if (random.nextInt(3) == 0) {
                    int pOffset = random.nextInt(SIZE - 512);
                    int pLength = random.nextInt(512);
                    region.persist(pOffset, pLength);
                    if (pLength > 0) {
                        for (int l = pOffset / LINE; l <= (pOffset + pLength - 1) / LINE; l++) {
                            persistedLine[l] = true;
                        }
                    }
                }
            }
            for (int image = 0; image < 10; image++) {
                byte[] crash = region.crashImage(new Random(seed * 1000 + image));
                for (int l = 0; l < persistedLine.length; l++) {
                    if (persistedLine[l]) {
                        final int line = l;
                        final long s = seed;
                        assertArrayEquals(Arrays.copyOfRange(model, l * LINE, l * LINE + LINE),
                                Arrays.copyOfRange(crash, l * LINE, l * LINE + LINE),
                                () -> "persisted line " + line + " changed in a crash image (seed " + s + ")");
                    }
                }
            }
        }
    }

    @Test
    void shouldKeepOrLoseEachUnpersistedWordWhole() {
        SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
        long oldValue = 0x1111111111111111L;
        long newValue = 0x2222222222222222L;
        int lines = 8;
        for (int w = 0; w < lines * LINE; w += WORD) {
            region.putLong(w, oldValue);
        }
        region.persist(0, lines * LINE);
        for (int w = 0; w < lines * LINE; w += WORD) {
            region.putLong(w, newValue);
        }
        assertEquals(lines, region.dirtyLines());
        int words = lines * LINE / WORD;
        int[] keptCount = new int[words];
        boolean sawAllKept = false;
        boolean sawAllLost = false;
        boolean sawMixedLine = false;
        int seeds = 200;
        for (long seed = 0; seed < seeds; seed++) {
            byte[] crash = region.crashImage(new Random(seed));
            int kept = 0;
            for (int i = 0; i < words; i++) {
                long v = word(crash, i * WORD);
                final long s = seed;
                final int at = i * WORD;
                assertTrue(v == oldValue || v == newValue,
                        () -> "word at " + at + " is torn: 0x" + Long.toHexString(v) + " (seed " + s + ")");
                if (v == newValue) {
                    keptCount[i]++;
                    kept++;
                }
            }
            sawAllKept |= kept == words;
            sawAllLost |= kept == 0;
            for (int l = 0; l < lines; l++) {
                long first = word(crash, l * LINE);
                for (int w = 1; w < LINE / WORD; w++) {
                    sawMixedLine |= word(crash, l * LINE + w * WORD) != first;
                }
            }
        }
        for (int i = 0; i < words; i++) {
            final int at = i * WORD;
            final int k = keptCount[i];
            assertTrue(k > 0 && k < seeds, () -> "word at " + at + " kept in " + k + " of " + seeds
                    + " images (seeds 0.." + (seeds - 1) + "): it must vary across seeds");
        }
        assertTrue(sawAllKept, "no image (seeds 0.." + (seeds - 1) + ") kept every unpersisted line");
        assertTrue(sawAllLost, "no image (seeds 0.." + (seeds - 1) + ") lost every unpersisted line");
        assertTrue(sawMixedLine, "no image (seeds 0.." + (seeds - 1) + ") tore a line at word granularity");
        assertArrayEquals(region.crashImage(new Random(7)), region.crashImage(new Random(7)),
                "the same seed must give the same image");
    }

    @Test
    void shouldPersistWholeCacheLines() {
        SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
        assertEquals(null, region.failure());
        region.putLong(LINE + 8, 42);
        region.putInt(LINE + 56, 7);
        region.persist(LINE + 60, 1);
        assertEquals(0, region.dirtyLines());
        byte[] lost = region.durableImage();
        assertEquals(42, word(lost, LINE + 8));
        assertEquals(1, region.persistCount());
    }

    @Test
    void shouldStartCleanFromContents() {
        SimulatedPmRegion first = new SimulatedPmRegion("pm", SIZE);
        first.putLong(0, 5);
        first.persist(0, 8);
        first.putLong(128, 6);
        byte[] image = first.crashImage(new Random(3));
        SimulatedPmRegion second = new SimulatedPmRegion("pm2", image.clone());
        assertEquals(0, second.dirtyLines());
        assertEquals(0, second.persistCount());
        assertEquals(5, second.getLong(0));
        for (long seed = 0; seed < 10; seed++) {
            assertArrayEquals(image, second.crashImage(new Random(seed)), "seed " + seed);
        }
    }

    @Test
    void shouldFreezeAtTheChosenPersist() {
        SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
        region.failAtPersist(3);
        for (int i = 0; i < 3; i++) {
            region.putLong(i * LINE, 100 + i);
            region.persist(i * LINE, 8);
        }
        region.putLong(3 * LINE, 103);
        SimulatedPowerFailure f = assertThrows(SimulatedPowerFailure.class, () -> region.persist(3 * LINE, 8));
        assertEquals(3, f.persistPoint());
        assertEquals(f, region.failure(), "the region remembers the failure and its code point");
        assertTrue(region.powerLost());
        assertEquals(3, region.persistCount());
        byte[] before = region.crashImage(new Random(1));

        assertThrows(SimulatedPowerFailure.class, () -> region.putLong(4 * LINE, 1));
        assertThrows(SimulatedPowerFailure.class, () -> region.write(5 * LINE, new byte[16], 0, 16));
        assertThrows(SimulatedPowerFailure.class, () -> region.write(5 * LINE, ByteBuffer.allocate(8)));
        assertThrows(SimulatedPowerFailure.class, () -> region.putInt(6 * LINE, 1));
        assertThrows(SimulatedPowerFailure.class, () -> region.putLongVolatile(6 * LINE, 1));
        assertThrows(SimulatedPowerFailure.class, () -> region.compareAndSetLong(0, 100, 1));
        assertThrows(SimulatedPowerFailure.class, () -> region.getAndAddLong(0, 1));
        assertThrows(SimulatedPowerFailure.class, () -> region.zero(0, 64));
        assertThrows(SimulatedPowerFailure.class, () -> region.persist(0, 8));
        assertEquals(3, region.persistCount(), "a dead region counts no persist");

        assertEquals(100, region.getLong(0), "reads continue after the failure");
        assertEquals(103, region.getLong(3 * LINE), "the store before the failing persist is visible to reads");
        assertEquals(0, region.getLong(4 * LINE), "nothing is stored after the failure");
        assertArrayEquals(before, region.crashImage(new Random(1)), "the media are frozen");
        assertEquals(102, word(region.durableImage(), 2 * LINE));
        assertEquals(0, word(region.durableImage(), 3 * LINE), "the failing persist made nothing durable");
    }

    @Test
    void shouldFailExactlyOnePersistAcrossThreadsAndFreezeEveryThread() throws Exception {
        for (long seed = 1; seed <= 5; seed++) {
            SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
            long failAt = 50 + new Random(seed).nextInt(200);
            region.failAtPersist(failAt);
            int threads = 4;
            AtomicInteger failures = new AtomicInteger();
            List<Long> points = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final int id = t;
                final long s = seed;
                Thread w = new Thread(() -> {
                    Random r = new Random(s * 31 + id);
                    try {
                        start.await();
                        for (int i = 0; i < 10_000; i++) {
                            int at = (id * 64 + r.nextInt(64)) * LINE;
                            region.putLong(at, i);
                            region.persist(at, 8);
                        }
                    } catch (SimulatedPowerFailure e) {
                        failures.incrementAndGet();
                        points.add(e.persistPoint());
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                w.start();
                workers.add(w);
            }
            start.countDown();
            for (Thread w : workers) {
                w.join(TimeUnit.SECONDS.toMillis(30));
                assertFalse(w.isAlive(), "worker stuck (seed " + seed + ")");
            }
            final long s = seed;
            assertEquals(threads, failures.get(), () -> "every thread must hit the failure (seed " + s + ")");
            assertEquals(failAt, region.persistCount(), "seed " + seed);
            assertTrue(points.stream().allMatch(p -> p == failAt), () -> "persist points " + points + " (seed " + s
                    + ")");
        }
    }

    @Test
    void shouldStoreAndPersistAsUsualWhenPerturbed() {
        SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
        assertThrows(IllegalArgumentException.class, () -> region.perturbPersists(t -> true, 2, -1));
        assertThrows(IllegalArgumentException.class, () -> region.perturbPersists(t -> true, 0, 10));
        region.perturbPersists(t -> true, 2, TimeUnit.MICROSECONDS.toNanos(50));
        for (int i = 0; i < 200; i++) {
            region.putLong(i * WORD, i);
            assertTrue(region.compareAndSetLong(i * WORD, i, i + 1));
        }
        region.persist(0, 200 * WORD);
        byte[] image = region.crashImage(new Random(9));
        for (int i = 0; i < 200; i++) {
            assertEquals(i + 1, word(image, i * WORD), "word " + i);
        }
    }

    @Test
    void shouldRejectAFailurePointInThePast() {
        SimulatedPmRegion region = new SimulatedPmRegion("pm", SIZE);
        region.persist(0, 8);
        region.persist(0, 8);
        assertThrows(IllegalArgumentException.class, () -> region.failAtPersist(1));
        region.failAtPersist(2);
        assertThrows(SimulatedPowerFailure.class, () -> region.persist(0, 8));
        assertThrows(IllegalStateException.class, () -> region.failAtPersist(5));
    }

    @Test
    void shouldFindThePowerFailureAmongCauses() {
        SimulatedPowerFailure f = new SimulatedPowerFailure("boom", 4);
        RuntimeException wrapped = new RuntimeException("outer", new IllegalStateException("mid", f));
        assertEquals(f, SimulatedPowerFailure.findIn(wrapped));
        RuntimeException suppressing = new RuntimeException("other");
        suppressing.addSuppressed(f);
        assertEquals(f, SimulatedPowerFailure.findIn(suppressing));
        assertEquals(null, SimulatedPowerFailure.findIn(new RuntimeException("none")));
    }
}
