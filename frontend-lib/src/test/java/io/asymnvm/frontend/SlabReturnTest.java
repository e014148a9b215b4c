package io.asymnvm.frontend;

import io.asymnvm.backend.slab.SlabTable;
import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.Fabric;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.frontend.RandomizedTransactionTest.Blocks;
import io.asymnvm.frontend.RandomizedTransactionTest.BlocksImpl;
import io.asymnvm.testsupport.Conditions;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.asymnvm.frontend.RandomizedTransactionTest.content;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Slab quotas and the return of empty slabs (DESIGN §6): slabs go back once their blocks are all free and
 * applied, another frontend is granted them clean, a quota refusal fails one transaction and nothing else, and a
 * frontend crash at each step of a return, or a backend restart after it, loses nothing.
 */
@Timeout(120)
class SlabReturnTest {
    /** Small slabs: one 20,000-byte block (class 32 KiB) per slab, so every allocation takes its own slab. */
    private static final long SLAB = 64 << 10;
    private static final int BLOCK = 20_000;
    private static final int SLOTS = 64;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private TestBackend backend;

    @AfterEach
    void tearDown() {
        if (backend != null) {
            backend.close();
        }
    }

    private static FrontendOptions options(boolean returns) {
        return FrontendOptions.builder().cacheBytes(4L << 20).returnEmptySlabs(returns).verifyCache(true)
                .conclude();
    }

    private SlabTable slabs() {
        return backend.node().slabs();
    }

    private static void fill(Blocks blocks, int from, int to) {
        for (int s = from; s < to; s++) {
            blocks.allocate(s, BLOCK, s);
        }
    }

    private static void expectSlots(Blocks blocks, Set<Integer> live) {
        for (int s = 0; s < SLOTS; s++) {
            if (live.contains(s)) {
                assertArrayEquals(content(BLOCK, s), blocks.read(s, BLOCK), "slot " + s);
            } else {
                assertEquals(0, blocks.address(s), "slot " + s + " should be empty");
            }
        }
    }

    private static Set<Integer> range(int from, int to) {
        Set<Integer> out = new HashSet<>();
        for (int s = from; s < to; s++) {
            out.add(s);
        }
        return out;
    }

    private void awaitHeld(int frontendId, int slabCount) {
        Conditions.awaitTrue("frontend " + frontendId + " to hold " + slabCount + " slabs", WAIT,
                () -> slabs().heldBy(frontendId) == slabCount, () -> "(holds " + slabs().heldBy(frontendId) + ")");
    }

    @Test
    void shouldReturnEmptySlabsThatAnotherFrontendIsThenGranted() {
        backend = TestBackend.start(dir, TestBackend.Transport.LOCAL, b -> b.slabSize(SLAB));
        try (AsymNvm first = backend.open(0, options(true))) {
            Blocks blocks = first.transactional(Blocks.class, new BlocksImpl());
            blocks.createIndex(SLOTS);
            fill(blocks, 0, 12);
            int held = slabs().heldBy(0);
            assertTrue(held >= 12, "12 blocks of one slab each, held " + held);
            Set<Long> before = new HashSet<>();
            Arrays.stream(slabs().ownedBy(0)).forEach(before::add);
            for (int s = 1; s < 12; s++) {
                blocks.free(s);
            }
            // slot 0's block shares the first slab with the index or has a slab of its own: all others go back
            awaitHeld(0, held - 11);
            // the backend's table changes before the frontend counts the return (the reply is still on its way)
            Conditions.awaitTrue("frontend 0 to count 11 slab returns", WAIT,
                    () -> first.stats().slabReturns() >= 11, () -> "(counted " + first.stats().slabReturns() + ")");
            assertEquals(11, first.stats().slabReturns());
            expectSlots(blocks, Set.of(0));

            try (AsymNvm second = backend.open(1, options(true))) {
                Blocks others = second.transactional(Blocks.class, new BlocksImpl());
                others.createIndex(SLOTS);
                fill(others, 0, 8);
                long reused = Arrays.stream(slabs().ownedBy(1)).filter(before::contains).count();
                assertTrue(reused >= 8, "frontend 1 was granted " + reused + " of frontend 0's returned slabs");
                expectSlots(others, range(0, 8));
            }
            fill(blocks, 20, 24); // the first frontend allocates again: new grants
            expectSlots(blocks, Set.of(0, 20, 21, 22, 23));
        }
    }

    @Test
    void shouldFailOnlyTheTransactionThatExceedsTheQuota() {
        backend = TestBackend.start(dir, TestBackend.Transport.LOCAL, b -> b.slabSize(SLAB).slabQuota(4));
        AsymNvm nvm = backend.open(0, options(true));
        Blocks blocks = nvm.transactional(Blocks.class, new BlocksImpl());
        blocks.createIndex(SLOTS);
        int slot = 0;
        AsymNvmException refused = null;
        while (refused == null && slot < 10) {
            try {
                blocks.allocate(slot, BLOCK, slot);
                slot++;
            } catch (AsymNvmException e) {
                refused = e;
            }
        }
        assertTrue(refused != null, "no refusal after " + slot + " allocations");
        assertEquals(ErrorCode.QUOTA_EXCEEDED, refused.errorCode(), refused.getMessage());
        assertTrue(refused.getMessage().contains("frontend 0 holds 4 slabs, quota 4"), refused.getMessage());
        long lastTx = nvm.stats().lastTxId();
        int full = slot;
        assertThrows(AsymNvmException.class, () -> blocks.allocate(full, BLOCK, full));
        assertEquals(lastTx, nvm.stats().lastTxId(), "a refused transaction logged nothing");
        assertEquals(0, blocks.address(full));
        expectSlots(blocks, range(0, full));

        blocks.free(full - 1); // its slab empties: taken back into use, or returned and granted again
        blocks.allocate(full, BLOCK, full);
        expectSlots(blocks, union(range(0, full - 1), Set.of(full)));
        assertTrue(slabs().heldBy(0) <= 4);

        nvm.crash();
        nvm = backend.open(0, options(true));
        Blocks again = nvm.transactional(Blocks.class, new BlocksImpl());
        nvm.recover();
        expectSlots(again, union(range(0, full - 1), Set.of(full)));
        nvm.close();
    }

    private static Set<Integer> union(Set<Integer> a, Set<Integer> b) {
        Set<Integer> out = new HashSet<>(a);
        out.addAll(b);
        return out;
    }

    /** Where the frontend dies during a return. */
    enum Step {
        /** The emptying transactions are durable and applied; the frontend dies before it returned anything. */
        BEFORE_THE_CALL,
        /** The RETURN request never reaches the backend. */
        REQUEST_LOST,
        /** The backend recorded the return; the frontend dies before the reply. */
        REPLY_LOST
    }

    @ParameterizedTest
    @EnumSource(Step.class)
    void shouldLoseNothingWhenTheFrontendDiesDuringAReturn(Step step) {
        backend = TestBackend.start(dir, TestBackend.Transport.LOCAL, b -> b.slabSize(SLAB));
        AtomicBoolean fired = new AtomicBoolean();
        AsymNvm[] holder = new AsymNvm[1];
        // The agent returns a slab as soon as the engine is idle between two calls: on a loaded machine that came
        // between two of the frees below, and the crash then failed the next free ("frontend abandoned", 1 run in
        // 60 with two CPU burners). The first return waits until every free committed.
        CountDownLatch freed = new CountDownLatch(1);
        Fabric fabric = crashingAtTheFirstReturn(backend.node().localFabric(), step, freed, () -> {
            fired.set(true);
            holder[0].crash();
        });
        AsymNvm nvm = AsymNvm.open(fabric, 0, options(step != Step.BEFORE_THE_CALL));
        holder[0] = nvm;
        Blocks blocks = nvm.transactional(Blocks.class, new BlocksImpl());
        blocks.createIndex(SLOTS);
        fill(blocks, 0, 7); // slot 0 shares the first slab with the index; slots 1 to 6 have a slab each
        int held = slabs().heldBy(0);
        for (int s = 1; s < 6; s++) {
            blocks.free(s);
        }
        freed.countDown();
        if (step == Step.BEFORE_THE_CALL) {
            nvm.sync();
            nvm.crash();
        } else {
            Conditions.awaitTrue("the return call", WAIT, fired::get);
        }
        int expectedReturns = step == Step.REPLY_LOST ? 4 : 5;
        assertEquals(step == Step.REPLY_LOST ? held - 1 : held, slabs().heldBy(0), "returns recorded at the crash");

        AsymNvm next = backend.open(0, options(true));
        Blocks recovered = next.transactional(Blocks.class, new BlocksImpl());
        next.recover();
        expectSlots(recovered, Set.of(0, 6));
        awaitHeld(0, held - 5);
        Conditions.awaitTrue("the new incarnation to count its returns", WAIT,
                () -> next.stats().slabReturns() >= expectedReturns,
                () -> "(counted " + next.stats().slabReturns() + ")");
        assertEquals(expectedReturns, next.stats().slabReturns(), "slabs the new incarnation returned");
        fill(recovered, 10, 13);
        expectSlots(recovered, Set.of(0, 6, 10, 11, 12));
        next.close();

        backend.restart(); // the returns were persisted: a restarted backend agrees
        assertEquals(held - 5 + 3, slabs().heldBy(0));
        try (AsymNvm after = backend.open(0, options(true))) {
            Blocks blocksAfter = after.transactional(Blocks.class, new BlocksImpl());
            expectSlots(blocksAfter, Set.of(0, 6, 10, 11, 12));
            blocksAfter.free(10);
            awaitHeld(0, held - 5 + 2);
        }
    }

    /**
     * A return whose reply is lost is sent again after the reconnect. A grant must not slip in between: the
     * backend would hand the just-freed slab back to this frontend, and the resent return would then free a slab
     * in use again. The resend here waits (at most 2 s) for such a grant, as a slow network could make it.
     */
    @Test
    void shouldNeverFreeASlabGrantedAgainBeforeALostReturnReplyIsResolved() throws Exception {
        backend = TestBackend.start(dir, TestBackend.Transport.LOCAL, b -> b.slabSize(SLAB));
        CountDownLatch replyLost = new CountDownLatch(1);
        CountDownLatch grantedMeanwhile = new CountDownLatch(1);
        AtomicInteger returns = new AtomicInteger();
        Fabric fabric = new ControlCallFabric(backend.node().localFabric(), (kind, request, next) -> {
            if (kind == ControlMessageLayout.KIND_RETURN_SLAB) {
                int n = returns.incrementAndGet();
                if (n == 1) {
                    next.call(request).await(); // recorded by the backend, the reply never arrives
                    replyLost.countDown();
                    return Completion.failed(next.counters(), new AsymNvmException(ErrorCode.CONNECTION_LOST,
                            "reply of a slab return lost"));
                }
                if (n == 2) {
                    try {
                        grantedMeanwhile.await(2, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return next.call(request);
            }
            Completion c = next.call(request);
            if (kind == ControlMessageLayout.KIND_GRANT_SLAB && replyLost.getCount() == 0) {
                c.await();
                grantedMeanwhile.countDown();
            }
            return c;
        });
        try (AsymNvm nvm = AsymNvm.open(fabric, 0, options(true))) {
            Blocks blocks = nvm.transactional(Blocks.class, new BlocksImpl());
            blocks.createIndex(SLOTS);
            fill(blocks, 0, 3); // slots 1 and 2 have a slab each
            blocks.free(1); // its slab is the only one on its way back: the next allocation needs a grant
            assertTrue(replyLost.await(WAIT.toSeconds(), TimeUnit.SECONDS), "no slab return was made");
            fill(blocks, 10, 12);
            expectSlots(blocks, Set.of(0, 2, 10, 11));
            Set<Long> owned = new HashSet<>();
            Arrays.stream(slabs().ownedBy(0)).forEach(owned::add);
            for (int s : new int[] {2, 10, 11}) {
                long slab = blocks.address(s) / SLAB;
                assertTrue(owned.contains(slab), "slot " + s + " lives in slab " + slab
                        + ", which the backend no longer counts as frontend 0's: " + owned);
            }
        }
        backend.restart(); // replay refuses redo outside a frontend's slabs: the image must still hold everything
        try (AsymNvm again = backend.open(0, options(true))) {
            expectSlots(again.transactional(Blocks.class, new BlocksImpl()), Set.of(0, 2, 10, 11));
        }
    }

    /**
     * Crashes the frontend (through {@code crash}) at the first RETURN_SLAB call, before or after forwarding it; that
     * call first waits (bounded) for {@code armed}.
     */
    private static Fabric crashingAtTheFirstReturn(Fabric delegate, Step step, CountDownLatch armed, Runnable crash) {
        AtomicBoolean done = new AtomicBoolean();
        return new ControlCallFabric(delegate, (kind, request, next) -> {
            if (kind != ControlMessageLayout.KIND_RETURN_SLAB || step == Step.BEFORE_THE_CALL
                    || done.getAndSet(true)) {
                return next.call(request);
            }
            try {
                if (!armed.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never armed the crash");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            if (step == Step.REPLY_LOST) {
                next.call(request).await();
            }
            crash.run();
            return Completion.failed(next.counters(), new AsymNvmException(ErrorCode.CONNECTION_LOST,
                    "frontend crashed during a slab return"));
        });
    }

    @Test
    void shouldKeepSlabsWhenReturnsAreTurnedOff() {
        backend = TestBackend.start(dir, TestBackend.Transport.LOCAL, b -> b.slabSize(SLAB));
        try (AsymNvm nvm = backend.open(0, options(false))) {
            Blocks blocks = nvm.transactional(Blocks.class, new BlocksImpl());
            blocks.createIndex(SLOTS);
            fill(blocks, 0, 4);
            int held = slabs().heldBy(0);
            for (int s = 0; s < 4; s++) {
                blocks.free(s);
            }
            nvm.sync();
            assertEquals(held, slabs().heldBy(0));
            assertEquals(0, nvm.stats().slabReturns());
            assertFalse(held < 4);
        }
    }
}
