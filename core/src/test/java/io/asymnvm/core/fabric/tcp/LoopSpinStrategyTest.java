package io.asymnvm.core.fabric.tcp;

import io.netty.channel.SelectStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LoopSpinStrategy}: a loop polls while events come and for the window after the last one, then gives up and
 * blocks (bounded spinning when no reply comes); woken again, it polls again. Driven with a fake poll, so no clock
 * assertion: only that the spinning stops by itself within a bounded number of polls.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LoopSpinStrategyTest {
    private static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    /** Far more polls than a 2 ms window can hold, so a strategy that never gives up fails the test. */
    private static final int MAX_POLLS = 50_000_000;

    @Test
    void pollsThenGivesUpWhenNothingComesAndPollsAgainOnceWoken() throws Exception {
        LoopSpinStrategy s = new LoopSpinStrategy(WINDOW_NANOS);
        AtomicInteger polls = new AtomicInteger();
        int first = s.calculateStrategy(() -> {
            polls.incrementAndGet();
            return 1; // an event: the window starts now
        }, false);
        assertEquals(1, first, "the poll's ready count goes to the loop");
        int polled = spinUntilSelect(s, polls);
        assertTrue(polled > 0, "it polled (non-blocking) before giving up");
        assertTrue(s.spins() > 0);
        // back from the blocking wait (a reply or a task woke the loop): the window starts again
        long before = polls.get();
        assertEquals(0, s.calculateStrategy(() -> {
            polls.incrementAndGet();
            return 0;
        }, false), "woken, it polls again instead of blocking at once");
        assertEquals(before + 1, polls.get());
        assertTrue(spinUntilSelect(s, polls) >= 0);
    }

    @Test
    void tasksArePolledNotBlockedOn() throws Exception {
        LoopSpinStrategy s = new LoopSpinStrategy(0);
        assertEquals(3, s.calculateStrategy(() -> 3, true), "with tasks: a non-blocking poll");
        assertEquals(SelectStrategy.SELECT, s.calculateStrategy(() -> 0, false), "window 0: block at once");
    }

    /** Calls with an empty poll until the strategy says SELECT; fails if it never does within MAX_POLLS. */
    private static int spinUntilSelect(LoopSpinStrategy s, AtomicInteger polls) throws Exception {
        int start = polls.get();
        for (int i = 0; i < MAX_POLLS; i++) {
            int r = s.calculateStrategy(() -> {
                polls.incrementAndGet();
                return 0;
            }, false);
            if (r == SelectStrategy.SELECT) {
                return polls.get() - start;
            }
            assertEquals(0, r);
        }
        throw new AssertionError("the loop never stopped spinning after " + MAX_POLLS + " empty polls");
    }
}
