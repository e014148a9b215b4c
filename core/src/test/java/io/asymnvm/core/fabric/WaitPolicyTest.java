package io.asymnvm.core.fabric;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The waiting policies, by behaviour: parks are counted by the connection's counters (the hook), thread states
 * are observed, and no assertion is on a duration.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class WaitPolicyTest {
    private static final long LIMIT_NANOS = TimeUnit.SECONDS.toNanos(20);

    @Test
    void shouldNeverParkASpinningWaiter() throws Exception {
        FabricCounters counters = new FabricCounters();
        Completion c = new Completion(counters);
        AtomicReference<Thread> waiter = new AtomicReference<>();
        CompletableFuture<Long> result = CompletableFuture.supplyAsync(() -> {
            waiter.set(Thread.currentThread());
            return c.await(WaitPolicy.spin()).value1();
        });
        // let it wait well past the longest adaptive spin, watching that it never leaves RUNNABLE to park
        long start = System.nanoTime();
        long deadline = start + LIMIT_NANOS;
        while (waiter.get() == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        while (System.nanoTime() - start < 20 * WaitPolicy.MAX_SPIN_NANOS) {
            Thread.State s = waiter.get().getState();
            assertNotEquals(Thread.State.WAITING, s);
            assertNotEquals(Thread.State.TIMED_WAITING, s);
            Thread.onSpinWait();
        }
        c.complete(new byte[0], 42, 0);
        assertEquals(42L, result.get(LIMIT_NANOS, TimeUnit.NANOSECONDS));
        assertEquals(0, counters.parks(), "a SPIN waiter never parks");
        assertEquals(1, counters.snapshot().roundTripsWaited());
    }

    @Test
    void shouldParkAtOnceUnderPark() throws Exception {
        assertEquals(0, WaitPolicy.park().spinNanos());
        FabricCounters counters = new FabricCounters();
        Completion c = new Completion(counters);
        CompletableFuture<Long> result = CompletableFuture.supplyAsync(() -> c.await(WaitPolicy.park()).value1());
        awaitPark(counters);
        c.complete(new byte[0], 7, 0);
        assertEquals(7L, result.get(LIMIT_NANOS, TimeUnit.NANOSECONDS));
        assertTrue(counters.parks() >= 1);
    }

    @Test
    void shouldParkAfterItsBoundUnderAdaptive() throws Exception {
        WaitPolicy adaptive = WaitPolicy.adaptive();
        long bound = adaptive.spinBound();
        assertTrue(bound >= WaitPolicy.MIN_SPIN_NANOS && bound <= WaitPolicy.MAX_SPIN_NANOS, "bound " + bound);
        FabricCounters counters = new FabricCounters();
        Completion c = new Completion(counters);
        CompletableFuture<Long> result = CompletableFuture.supplyAsync(() -> c.await(adaptive).value1());
        awaitPark(counters); // never completed while it spins: it must give up spinning and park
        c.complete(new byte[0], 9, 0);
        assertEquals(9L, result.get(LIMIT_NANOS, TimeUnit.NANOSECONDS));
        assertTrue(counters.parks() >= 1);
    }

    @Test
    void shouldNotWaitForACompletionAlreadyDone() {
        for (WaitPolicy p : new WaitPolicy[] {WaitPolicy.spin(), WaitPolicy.adaptive(), WaitPolicy.park()}) {
            FabricCounters counters = new FabricCounters();
            Completion c = new Completion(counters);
            c.complete(new byte[0], 1, 2);
            assertEquals(2, c.await(p).value2());
            assertEquals(0, counters.parks(), p.toString());
        }
    }

    @Test
    void shouldLearnTheAdaptiveBoundFromRecentWaits() {
        WaitPolicy adaptive = WaitPolicy.adaptive();
        assertEquals(WaitPolicy.INITIAL_SPIN_NANOS, adaptive.spinBound());
        for (int i = 0; i < 200; i++) {
            adaptive.observed(adaptive.spinBound(), 1_000); // fast replies: the bound shrinks to its floor
        }
        assertEquals(WaitPolicy.MIN_SPIN_NANOS, adaptive.spinBound());
        for (int i = 0; i < 200; i++) {
            adaptive.observed(adaptive.spinBound(), 60_000); // ~60 us round trips: spin about twice that
        }
        long bound = adaptive.spinBound();
        assertTrue(bound > 100_000 && bound <= 120_000, "bound " + bound);
        for (int i = 0; i < 200; i++) {
            adaptive.observed(adaptive.spinBound(), TimeUnit.SECONDS.toNanos(1)); // slow replies: capped
        }
        assertEquals(WaitPolicy.MAX_SPIN_NANOS, adaptive.spinBound());
        WaitPolicy.spin().observed(1, 1);
        assertEquals(Long.MAX_VALUE, WaitPolicy.spin().spinNanos(), "SPIN learns nothing");
    }

    @Test
    void shouldPickTheFasterModeAndExploreTheOtherOneWaitInSixteen() {
        WaitPolicy adaptive = WaitPolicy.adaptive();
        for (int i = 0; i < 200; i++) {
            adaptive.observed(0, 40_000); // parking at once: 40 us
            adaptive.observed(adaptive.spinBound(), 120_000); // spinning first: 120 us (an oversubscribed machine)
        }
        assertEquals(1, countSpinning(adaptive, WaitPolicy.EXPLORE_EVERY),
                "parks at once but for one exploring wait in 16");
        for (int i = 0; i < 200; i++) {
            adaptive.observed(adaptive.spinBound(), 10_000); // load gone: spinning answers in 10 us
        }
        assertEquals(WaitPolicy.EXPLORE_EVERY - 1, countSpinning(adaptive, WaitPolicy.EXPLORE_EVERY),
                "spins but for one exploring wait in 16");
    }

    private static int countSpinning(WaitPolicy p, int waits) {
        int spinning = 0;
        for (int i = 0; i < waits; i++) {
            if (p.spinNanos() > 0) {
                spinning++;
            }
        }
        return spinning;
    }

    @Test
    void shouldOpenAGateOnFailureWithoutCountingARoundTripOrThrowing() throws Exception {
        FabricCounters counters = new FabricCounters();
        Completion c = new Completion(counters);
        CompletableFuture<Boolean> gate = CompletableFuture.supplyAsync(() -> {
            c.awaitSettled(WaitPolicy.park());
            return c.isFailed();
        });
        awaitPark(counters);
        c.fail(new io.asymnvm.core.AsymNvmException(io.asymnvm.core.ErrorCode.CONNECTION_LOST, "gone"));
        assertTrue(gate.get(LIMIT_NANOS, TimeUnit.NANOSECONDS), "the gate opened on the failure");
        assertEquals(0, counters.snapshot().roundTripsWaited(), "a gate is not a round trip of the waiter");
    }

    @Test
    void shouldTimeOutASpinningWaiter() {
        FabricCounters counters = new FabricCounters();
        Completion c = new Completion(counters);
        var e = assertThrows(io.asymnvm.core.AsymNvmException.class,
                () -> c.await(WaitPolicy.spin(), TimeUnit.MILLISECONDS.toNanos(5)));
        assertEquals(io.asymnvm.core.ErrorCode.TIMEOUT, e.errorCode());
        assertEquals(0, counters.parks());
    }

    @Test
    void shouldParseKindsAndNameTheBadOne() {
        assertEquals(WaitPolicy.Kind.SPIN, WaitPolicy.Kind.parse("spin"));
        assertEquals(WaitPolicy.Kind.ADAPTIVE, WaitPolicy.Kind.parse("Adaptive"));
        assertEquals(WaitPolicy.Kind.PARK, WaitPolicy.Kind.parse(" PARK "));
        var e = assertThrows(IllegalArgumentException.class, () -> WaitPolicy.Kind.parse("yield"));
        assertTrue(e.getMessage().contains("'yield'") && e.getMessage().contains("spin, adaptive, park"),
                e.getMessage());
        assertEquals(WaitPolicy.Kind.SPIN, WaitPolicy.of(WaitPolicy.Kind.SPIN).kind());
        assertNotEquals(WaitPolicy.of(WaitPolicy.Kind.ADAPTIVE), WaitPolicy.of(WaitPolicy.Kind.ADAPTIVE),
                "each adaptive policy learns on its own");
    }

    private static void awaitPark(FabricCounters counters) {
        long deadline = System.nanoTime() + LIMIT_NANOS;
        while (counters.parks() == 0) {
            assertTrue(System.nanoTime() < deadline, "the waiter did not park within 20 s");
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
    }
}
