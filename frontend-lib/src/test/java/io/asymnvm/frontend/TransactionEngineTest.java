package io.asymnvm.frontend;

import io.asymnvm.backend.log.FrontendLog;
import io.asymnvm.core.layout.SemanticRecordLayout;
import io.asymnvm.frontend.tx.ArgumentClasses;
import io.asymnvm.frontend.tx.ArgumentCodec;
import io.asymnvm.frontend.tx.EngineStats;
import io.asymnvm.frontend.tx.MethodRegistry;
import io.asymnvm.recovery.log.RingScanner;
import io.asymnvm.testsupport.ShmTempDirFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertThrowsExactly;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transaction engine end to end (embedded backend, local fabric): commit, abort, bounds, allocation, arguments. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransactionEngineTest {
    private static final long SLAB = 1L << 20;

    @TempDir(factory = ShmTempDirFactory.class)
    Path dir;

    private static Cells cells(AsymNvm nvm) {
        return nvm.transactional(Cells.class, new Cells.Impl());
    }

    private static Heap heap(AsymNvm nvm) {
        return nvm.transactional(Heap.class, new Heap.Impl());
    }

    @Test
    void shouldSeeCommittedValuesInLaterTransactionsAndAfterReopen() {
        long seed = 0x5EED_0001L;
        Random random = new Random(seed);
        long[] oracle = new long[64];
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            cells.create(oracle.length);
            for (int i = 0; i < 500; i++) {
                int index = random.nextInt(oracle.length);
                if (random.nextBoolean()) {
                    long value = random.nextLong();
                    cells.set(index, value);
                    oracle[index] = value;
                } else {
                    int to = random.nextInt(oracle.length);
                    long amount = random.nextInt(1000);
                    cells.add(index, to, amount);
                    oracle[index] -= amount;
                    oracle[to] += amount;
                }
                assertEquals(oracle[index], cells.get(index), "cell " + index + " after op " + i + ", seed " + seed);
            }
            assertArrayEquals(oracle, cells.snapshot(), "seed " + seed);
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            assertEquals(oracle.length, cells.count());
            assertArrayEquals(oracle, cells.snapshot(), "after reopen, seed " + seed);
        }
    }

    @Test
    void shouldAbortTransactionThatThrowsAndRethrowItUnchanged() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            cells.create(8);
            cells.set(3, 30);
            EngineStats before = nvm.stats();

            IllegalArgumentException e = assertThrowsExactly(IllegalArgumentException.class,
                    () -> cells.setThenFail(3, 77));

            assertEquals("refused 77", e.getMessage());
            assertNull(e.getCause(), "the method's own exception, not a wrapper");
            assertEquals(Cells.Impl.class.getName(), e.getStackTrace()[0].getClassName(),
                    "thrown where the method threw it");
            EngineStats after = nvm.stats();
            assertEquals(before.commits(), after.commits(), "an aborted transaction is not a commit");
            assertEquals(before.aborts() + 1, after.aborts());
            assertEquals(before.lastTxId(), after.lastTxId(), "an aborted transaction gets no transaction id");
            assertEquals(30, cells.get(3), "the aborted write is not visible");
            cells.set(4, 40);
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            assertEquals(30, cells.get(3), "the aborted write is not visible after reopen");
            assertEquals(40, cells.get(4));
        }
    }

    @Test
    void shouldRefuseReadOnlyTransactionThatWrites() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            cells.create(4);
            long commits = nvm.stats().commits();

            IllegalStateException e = assertThrows(IllegalStateException.class, () -> cells.setDespiteReadOnly(1, 5));

            assertTrue(e.getMessage().contains("read-only") && e.getMessage().contains("setDespiteReadOnly"),
                    e.getMessage());
            assertEquals(0, cells.get(1), "the refused write is not visible");
            assertEquals(commits, nvm.stats().commits());
        }
    }

    @Test
    void shouldRefuseTransactionAccessOutsideTransaction() throws Exception {
        IllegalStateException onPlainThread = CompletableFuture.supplyAsync(() -> {
            try {
                Transaction.current();
                return null;
            } catch (IllegalStateException e) {
                return e;
            }
        }).get(10, TimeUnit.SECONDS);
        assertInstanceOf(IllegalStateException.class, onPlainThread);
        assertTrue(onPlainThread.getMessage().contains("no persistent transaction"), onPlainThread.getMessage());

        assertThrows(IllegalStateException.class, Transaction::current, "test thread, no transaction running");
        assertThrows(IllegalStateException.class, () -> new Cells.Impl().set(0, 1),
                "an implementation called directly, not through its proxy");
    }

    @Test
    void shouldUnbindTheTransactionWhenTheMethodReturns() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Cells cells = cells(nvm);
            cells.create(2);
            assertThrows(IllegalStateException.class, Transaction::current,
                    "the transaction is unbound from the calling thread once the method returned");
            assertThrows(IllegalArgumentException.class, () -> cells.setThenFail(0, 1));
            assertThrows(IllegalStateException.class, Transaction::current, "and once it threw");
        }
    }

    @Test
    void shouldRejectWriteOutsideSlabsNamingTheRange() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            long block = heap.allocate(64);
            long aborts = nvm.stats().aborts();
            long foreignSlab = (block / SLAB + 7) * SLAB + 128;

            IllegalArgumentException notOwned = assertThrows(IllegalArgumentException.class,
                    () -> heap.writeLongAt(foreignSlab, 1));
            assertTrue(notOwned.getMessage().contains("[" + foreignSlab + ", " + (foreignSlab + 8) + ")")
                    && notOwned.getMessage().contains("outside the slabs granted to frontend 0"), notOwned.getMessage());

            long beyond = 1L << 40;
            IllegalArgumentException outsideHeap = assertThrows(IllegalArgumentException.class,
                    () -> heap.writeLongAt(beyond, 1));
            assertTrue(outsideHeap.getMessage().contains("[" + beyond + ", " + (beyond + 8) + ")")
                    && outsideHeap.getMessage().contains("outside the heap"), outsideHeap.getMessage());

            IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                    () -> heap.writeLongAt(-8, 1));
            assertTrue(negative.getMessage().contains("[-8, 0)"), negative.getMessage());

            assertThrows(IllegalArgumentException.class, () -> heap.readLongAt(beyond), "reads are bounded too");
            assertEquals(aborts + 4, nvm.stats().aborts(), () -> "each refused access aborted its transaction, "
                    + nvm.stats());
        }
    }

    @Test
    void shouldGrantMoreSlabsWhenAllocationsExceedOneAndKeepThemAcrossReopen() {
        int blockSize = 64 << 10;
        int blocks = 40;
        List<Long> addresses = new ArrayList<>();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            long control = nvm.stats().controlRoundTrips();
            for (int i = 0; i < blocks; i++) {
                addresses.add(heap.allocateFilled(blockSize, i));
            }
            Set<Long> slabs = new HashSet<>();
            for (long a : addresses) {
                slabs.add(a / SLAB);
            }
            assertTrue(slabs.size() >= 3, "40 blocks of 64 KiB span at least 3 slabs of 1 MiB: " + slabs);
            assertTrue(nvm.stats().controlRoundTrips() - control >= slabs.size(),
                    "each slab came from a grant call: " + nvm.stats());
            assertEquals(blocks, new HashSet<>(addresses).size(), "distinct blocks");
            for (int i = 0; i < blocks; i++) {
                assertArrayEquals(Heap.pattern(i, blockSize), heap.readBytes(addresses.get(i), blockSize),
                        "block " + i);
            }
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            for (int i = 0; i < blocks; i++) {
                assertArrayEquals(Heap.pattern(i, blockSize), heap.readBytes(addresses.get(i), blockSize),
                        "block " + i + " after reopen");
            }
            long next = heap.allocate(blockSize);
            assertTrue(!addresses.contains(next), "allocator metadata survived reopen: " + next + " is new");
        }
    }

    @Test
    void shouldReturnZeroedMemoryAfterFreeAndReallocate() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            long first = heap.allocateFilled(100, 1);
            assertNotEquals(0, first);
            heap.free(first);
            long second = heap.allocate(100);
            assertEquals(first, second, "a freed block of the same size class is reused first");
            assertArrayEquals(new byte[100], heap.readBytes(second, 100), "reused block is zeroed");
            long third = heap.allocateFilled(100, 2);
            assertNotEquals(second, third);
            heap.writeLongAt(second, 42);
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            long block = heap.allocateFilled(100, 3);
            heap.free(block);
            long again = heap.allocate(100);
            assertEquals(block, again);
            assertArrayEquals(new byte[100], heap.readBytes(again, 100), "zeroed after reopen too");
        }
    }

    @Test
    void shouldRefuseDoubleFree() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Heap heap = heap(nvm);
            long block = heap.allocate(48);
            long other = heap.allocate(48);
            heap.free(block);

            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> heap.free(block));
            assertTrue(e.getMessage().contains("double free"), e.getMessage());

            IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> heap.freeTwice(other));
            assertTrue(twice.getMessage().contains("double free"), twice.getMessage());
            heap.free(other); // the aborted transaction's first free was discarded with it

            assertThrows(IllegalArgumentException.class, () -> heap.free(other + 8), "not a block start");
            assertThrows(IllegalArgumentException.class, () -> heap.free(1L << 40), "outside the slabs");
        }
    }

    @Test
    void shouldCarryStringArrayAndRecordArguments() {
        String text = "persistent \u00fcnicode \u2603 text";
        long[] values = new Random(7).longs(300).toArray();
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Notes notes = nvm.transactional(Notes.class, new Notes.Impl());
            notes.init();
            notes.putText("first");
            notes.putText(text);
            notes.putValues(values);
            assertEquals(5, notes.apply(new Notes.Transfer("a", "b", 5)));
            assertEquals(12, notes.apply(new Notes.Transfer("b", null, 7)));
            assertEquals(text, notes.text());
            assertArrayEquals(values, notes.values());
        }
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Notes notes = nvm.transactional(Notes.class, new Notes.Impl());
            assertEquals(text, notes.text());
            assertArrayEquals(values, notes.values());
            assertEquals(13, notes.apply(new Notes.Transfer("c", "d", 1)));
        }
    }

    @Test
    void shouldRejectArgumentsLargerThanTheSemanticRecordLimit() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            Notes notes = nvm.transactional(Notes.class, new Notes.Impl());
            notes.init();
            long commits = nvm.stats().commits();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> notes.putValues(new Random(11).longs(200_000).toArray()));
            assertTrue(e.getMessage().contains("putValues") && e.getMessage().contains("limit"), e.getMessage());
            assertEquals(commits, nvm.stats().commits());
            assertNull(notes.values());
        }
    }

    @Test
    void shouldRoundTripArgumentsThroughTheCodec() {
        Object[] args = {"text \u2603", new long[] {1, -2, Long.MAX_VALUE}, new Notes.Transfer("x", "y", 9), null, 42,
                Map.of("k", List.of(1L, 2L))};
        ArgumentClasses allowed = new ArgumentClasses(0);
        allowed.allow(Notes.Transfer.class);
        Map<String, List<Long>> map = Map.of("k", List.of(1L, 2L));
        allowed.allow(map.getClass());
        allowed.allow(map.get("k").getClass());
        ArgumentCodec codec = new ArgumentCodec(allowed);
        Object[] decoded = codec.decode(codec.encode(args));
        assertEquals(args.length, decoded.length);
        assertEquals(args[0], decoded[0]);
        assertArrayEquals((long[]) args[1], (long[]) decoded[1]);
        assertEquals(args[2], decoded[2]);
        assertNull(decoded[3]);
        assertEquals(args[4], decoded[4]);
        assertEquals(args[5], decoded[5]);
        assertEquals(0, codec.decode(codec.encode(new Object[0])).length);
    }

    @Test
    void shouldLogKryoEncodedArgumentsInTheSemanticRecord() throws Exception {
        FrontendOptions keepRedo = FrontendOptions.builder().redoBatch(1 << 20, 16 << 20, 10_000_000).conclude();
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL)) {
            Map<Long, Object[]> expected = new HashMap<>();
            try (AsymNvm nvm = backend.open(2, keepRedo)) {
                Notes notes = nvm.transactional(Notes.class, new Notes.Impl());
                notes.init();
                nvm.sync();
                long[] values = {3, 1, 4, 1, 5, 9, 2, 6};
                Notes.Transfer transfer = new Notes.Transfer("alice", "bob", 12);
                notes.putText("hello \u2603");
                expected.put(nvm.stats().lastTxId(), new Object[] {"hello \u2603"});
                notes.putValues(values);
                expected.put(nvm.stats().lastTxId(), new Object[] {values});
                notes.apply(transfer);
                expected.put(nvm.stats().lastTxId(), new Object[] {transfer});

                FrontendLog log = backend.node().frontendLog(2);
                Map<Long, byte[]> records = new HashMap<>();
                RingScanner.scan(log.semanticReader(), log.checkpoint().semHead(), 0,
                        e -> records.put(SemanticRecordLayout.txId(e.bytes()), e.bytes()));
                assertEquals(expected.keySet(), records.keySet(), "one semantic record per unapplied transaction");
                String[] methods = {"putText(java.lang.String)", "putValues(long[])",
                        "apply(" + Notes.Transfer.class.getTypeName() + ")"};
                long tx = nvm.stats().lastTxId() - 2;
                MethodRegistry registry = new MethodRegistry(2); // a new JVM's: allows what registering Notes does
                registry.register(Notes.class, new Notes.Impl());
                ArgumentCodec codec = new ArgumentCodec(registry.argumentClasses());
                for (String method : methods) {
                    byte[] record = records.get(tx);
                    assertEquals(MethodRegistry.hash(Notes.class.getName() + "#" + method),
                            SemanticRecordLayout.methodHash(record), method);
                    Object[] args = codec.decode(SemanticRecordLayout.arguments(record));
                    assertEquals(1, args.length);
                    Object want = expected.get(tx)[0];
                    if (want instanceof long[] w) {
                        assertArrayEquals(w, (long[]) args[0], method);
                    } else {
                        assertEquals(want, args[0], method);
                    }
                    tx++;
                }
            }
        }
    }

    @Test
    void shouldRefuseWriteIntoAnotherFrontendsSlabAndStraddlingTheHeapEnd() {
        try (TestBackend backend = TestBackend.start(dir, TestBackend.Transport.LOCAL);
             AsymNvm zero = backend.open(0, FrontendOptions.defaults());
             AsymNvm one = backend.open(1, FrontendOptions.defaults())) {
            Heap heap0 = heap(zero);
            Heap heap1 = heap(one);
            long mine = heap0.allocate(16);
            long theirs = heap1.allocateFilled(16, 5);
            assertNotEquals(mine / SLAB, theirs / SLAB, "each frontend has its own slab");

            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> heap0.writeLongAt(theirs, 1));
            assertTrue(e.getMessage().contains("[" + theirs + ", " + (theirs + 8) + ")")
                    && e.getMessage().contains("frontend 0"), e.getMessage());
            one.sync();
            assertArrayEquals(Heap.pattern(5, 16), heap0.readBytes(theirs, 16),
                    "the heap is readable by every frontend; the refused write changed nothing");

            long end = backend.heapSize();
            IllegalArgumentException straddle = assertThrows(IllegalArgumentException.class,
                    () -> heap0.writeLongAt(end - 4, 1));
            assertTrue(straddle.getMessage().contains("[" + (end - 4) + ", " + (end + 4) + ")")
                    && straddle.getMessage().contains("heap of " + end + " bytes"), straddle.getMessage());
            assertThrows(IllegalArgumentException.class, () -> heap0.readBytes(end - 4, 8));
            assertArrayEquals(new byte[0], heap0.readBytes(end, 0), "an empty read at the end is in bounds");
        }
    }

    @Test
    void shouldKeepRegisteredMethodsDistinct() {
        try (AsymNvm nvm = AsymNvm.embedded(dir)) {
            cells(nvm);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> cells(nvm));
            assertTrue(e.getMessage().contains("already registered"), e.getMessage());
            assertThrows(IllegalArgumentException.class,
                    () -> nvm.transactional(Runnable.class, () -> { }), "no @PersistentTransaction method");
        }
    }
}
