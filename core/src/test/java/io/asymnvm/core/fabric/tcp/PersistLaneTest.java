package io.asymnvm.core.fabric.tcp;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The persist lane and the FLUSH placement switch. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PersistLaneTest {
    @Test
    void shouldRunTasksInOrderOnItsOwnThreadAndWakeFromParking() throws Exception {
        try (PersistLane lane = new PersistLane("test-lane")) {
            List<Integer> seen = new ArrayList<>();
            Thread[] ran = new Thread[1];
            CountDownLatch first = new CountDownLatch(100);
            for (int i = 0; i < 100; i++) {
                int n = i;
                lane.execute(() -> {
                    seen.add(n);
                    ran[0] = Thread.currentThread();
                    first.countDown();
                });
            }
            assertTrue(first.await(10, TimeUnit.SECONDS));
            // park: wait until the lane thread is parked, then a new task must still run
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            // the state is read once per check: a parked thread may return from park() spuriously, look at its
            // empty queue and park again, so a second read can see it RUNNABLE in between (seen once in CI)
            Thread.State state;
            while ((state = ran[0].getState()) != Thread.State.WAITING && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(Thread.State.WAITING, state, "idle lane parks after its spin");
            CountDownLatch second = new CountDownLatch(1);
            lane.execute(second::countDown);
            assertTrue(second.await(10, TimeUnit.SECONDS), "a parked lane wakes for a new task");
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                expected.add(i);
            }
            assertEquals(expected, seen);
            assertNotSame(Thread.currentThread(), ran[0]);
        }
    }

    @Test
    void shouldRefuseTasksOnceClosed() {
        PersistLane lane = new PersistLane("test-lane");
        lane.close();
        assertThrows(RejectedExecutionException.class, () -> lane.execute(() -> { }));
    }

    @Test
    void shouldParsePlacementsAndNameABadOne() {
        assertEquals(FlushPlacement.INLINE_WHEN_ALONE, FlushPlacement.parse("inline"));
        assertEquals(FlushPlacement.LANE, FlushPlacement.parse(" Lane "));
        assertEquals(FlushPlacement.WORKERS, FlushPlacement.parse("workers"));
        var e = assertThrows(IllegalArgumentException.class, () -> FlushPlacement.parse("loop"));
        assertTrue(e.getMessage().contains("'loop'") && e.getMessage().contains("inline, lane or workers"),
                e.getMessage());
    }
}
