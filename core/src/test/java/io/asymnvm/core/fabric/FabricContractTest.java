package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.region.MappedRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The behaviour every {@link Fabric} must show, whatever the transport: access control by the control plane,
 * one-sided READ/WRITE/CAS/FLUSH on registered memory, error codes, ordering, counters, and close semantics.
 * Concrete subclasses supply the transport.
 */
@Timeout(60)
public abstract class FabricContractTest {
    protected static final long REGION_SIZE = 1 << 20;
    /** Read-write window (a frontend's control region). */
    protected static final int RW = 16;
    protected static final long RW_BASE = 0;
    protected static final long RW_LENGTH = 64 * 1024;
    /** Read-only window (the heap), directly after the read-write one in the backing file. */
    protected static final int RO = 1;
    protected static final long RO_BASE = RW_BASE + RW_LENGTH;
    protected static final long RO_LENGTH = 256 * 1024;
    /** Granted by the control plane but never registered. */
    protected static final int UNREGISTERED = 42;
    /** Registered nowhere and granted to nobody. */
    protected static final int NOT_GRANTED = 99;
    protected static final int FRONTEND = 7;

    @TempDir
    protected Path dir;

    protected MappedRegion backing;
    protected RegionTable table;
    protected EmulatedNic nic;
    protected Fabric fabric;
    protected final List<FabricConnection> connections = new ArrayList<>();
    protected final List<NicSession> attachedSessions = new CopyOnWriteArrayList<>();
    protected final CountDownLatch sessionClosed = new CountDownLatch(1);
    protected final byte[] roContent = pattern((int) RO_LENGTH, 5);

    /** Starts whatever the transport needs and returns a fabric to the given NIC. */
    protected abstract Fabric createFabric(EmulatedNic nic) throws Exception;

    /** Stops transport resources other than the fabric (a server). */
    protected void stopTransport() {
    }

    /** The control handler's reply to a request: an echo, unless a subclass needs something else. */
    protected byte[] controlReply(NicSession session, byte[] request) {
        return request.clone();
    }

    @BeforeEach
    void setUpFabric() throws Exception {
        backing = MappedRegion.create(dir.resolve("node.img"), REGION_SIZE, MappedRegion.MapMode.FILE);
        backing.write(RO_BASE, roContent, 0, roContent.length);
        table = new RegionTable();
        table.register(RW, backing, RW_BASE, RW_LENGTH, null);
        table.register(RO, backing, RO_BASE, RO_LENGTH, null);
        ControlHandler handler = new ControlHandler() {
            @Override
            public byte[] handle(NicSession session, byte[] request) {
                session.bind(FRONTEND, 1);
                session.grant(RW, Access.READ_WRITE);
                session.grant(RO, Access.READ);
                session.grant(UNREGISTERED, Access.READ_WRITE);
                session.stampAt(RW, 0);
                attachedSessions.add(session);
                return controlReply(session, request);
            }

            @Override
            public void sessionClosed(NicSession session) {
                if (attachedSessions.contains(session)) {
                    sessionClosed.countDown();
                }
            }
        };
        nic = new EmulatedNic(table, handler, PersistenceDomain.ADR);
        fabric = createFabric(nic);
    }

    @AfterEach
    void tearDownFabric() {
        try {
            for (FabricConnection c : connections) {
                c.close();
            }
            if (fabric != null) {
                fabric.close();
            }
        } finally {
            try {
                stopTransport();
            } finally {
                backing.close();
            }
        }
    }

    // ---- helpers ----

    protected FabricConnection connect() {
        FabricConnection c = fabric.connect();
        connections.add(c);
        return c;
    }

    protected FabricConnection attached() {
        FabricConnection c = connect();
        byte[] hello = "attach".getBytes(StandardCharsets.UTF_8);
        assertArrayEquals(hello, c.call(hello).await().bytes());
        return c;
    }

    protected static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 7);
        }
        return b;
    }

    protected static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    protected static long le(byte[] b) {
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    protected static AsymNvmException assertFails(ErrorCode code, Completion c) {
        AsymNvmException e = assertThrows(AsymNvmException.class, c::await);
        assertEquals(code, e.errorCode(), e.getMessage());
        assertTrue(c.isDone());
        assertTrue(c.isFailed());
        assertEquals(code, c.error().errorCode());
        return e;
    }

    protected static void assertFails(ErrorCode code, Executable postAndAwait) {
        AsymNvmException e = assertThrows(AsymNvmException.class, postAndAwait);
        assertEquals(code, e.errorCode(), e.getMessage());
    }

    /** Proves the connection is healthy: a fresh write and read of distinct bytes round-trip. */
    protected static void assertUsable(FabricConnection c, int seed) {
        byte[] data = pattern(24, seed);
        c.write(RW, 40_000, data, 0, data.length).await();
        assertArrayEquals(data, c.read(RW, 40_000, data.length).await().bytes());
    }

    // ---- tests ----

    @Test
    void nameIsStable() {
        assertTrue(List.of("local", "tcp", "rdma").contains(fabric.name()), fabric.name());
    }

    @Test
    void beforeControlCallEveryOneSidedOperationIsNotAttached() {
        FabricConnection c = connect();
        assertTrue(c.isOpen());
        backing.putLong(RW_BASE + 8, 3);
        assertFails(ErrorCode.NOT_ATTACHED, c.read(RW, 0, 8));
        assertFails(ErrorCode.NOT_ATTACHED, c.read(RO, 0, 8));
        assertFails(ErrorCode.NOT_ATTACHED, c.write(RW, 8, le(4), 0, 8));
        assertFails(ErrorCode.NOT_ATTACHED, c.compareAndSwap(RW, 8, 3, 5));
        assertEquals(3, backing.getLong(RW_BASE + 8), "refused operations must not touch memory");
        // the control call attaches the same connection
        c.call(new byte[] {1}).await();
        assertEquals(3, le(c.read(RW, 8, 8).await().bytes()));
    }

    @Test
    void controlCallEchoesRequest() {
        FabricConnection c = connect();
        byte[] req = pattern(300, 11);
        Completion done = c.call(req).await();
        assertArrayEquals(req, done.bytes());
        assertEquals(1, attachedSessions.size());
    }

    @Test
    void writeThenReadReturnsTheBytes() {
        FabricConnection c = attached();
        byte[] data = pattern(1000, 3);
        c.write(RW, 123, data, 0, data.length).await();
        assertArrayEquals(data, c.read(RW, 123, data.length).await().bytes());
        // the write landed in the registered window of the backing region
        assertArrayEquals(data, backing.read(RW_BASE + 123, data.length));
        // sub-array of the caller's buffer
        c.write(RW, 5000, data, 10, 20).await();
        assertArrayEquals(Arrays.copyOfRange(data, 10, 30), c.read(RW, 5000, 20).await().bytes());
        // zero-length read
        assertArrayEquals(new byte[0], c.read(RW, 7, 0).await().bytes());
    }

    @Test
    void readOnlyRegionIsReadableAtWindowOffsets() {
        FabricConnection c = attached();
        assertArrayEquals(Arrays.copyOfRange(roContent, 0, 64), c.read(RO, 0, 64).await().bytes());
        assertArrayEquals(Arrays.copyOfRange(roContent, (int) RO_LENGTH - 16, (int) RO_LENGTH),
                c.read(RO, RO_LENGTH - 16, 16).await().bytes());
    }

    @Test
    void operationsCompleteInPostingOrder() {
        FabricConnection c = attached();
        int n = 500;
        List<Completion> writes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            writes.add(c.write(RW, 256, le(i + 1_000_000L), 0, 8));
        }
        Completion read = c.read(RW, 256, 8);
        assertEquals(n - 1 + 1_000_000L, le(read.await().bytes()));
        for (Completion w : writes) {
            assertTrue(w.isDone(), "a write posted before the read must complete before it");
            assertFalse(w.isFailed());
        }
    }

    @Test
    void interleavedOperationsKeepTheirOrder() {
        FabricConnection c = attached();
        c.write(RW, 512, le(1), 0, 8);
        Completion r1 = c.read(RW, 512, 8);
        Completion cas = c.compareAndSwap(RW, 512, 1, 2);
        Completion r2 = c.read(RW, 512, 8);
        c.write(RW, 512, le(3), 0, 8);
        Completion r3 = c.read(RW, 512, 8);
        assertEquals(3, le(r3.await().bytes()));
        assertEquals(1, le(r1.await().bytes()));
        assertEquals(1, cas.await().value1());
        assertEquals(2, le(r2.await().bytes()));
    }

    @Test
    void casSuccessAndFailureReturnTheWitness() {
        FabricConnection c = attached();
        c.write(RW, 64, le(5), 0, 8).await();

        Completion ok = c.compareAndSwap(RW, 64, 5, 9).await();
        assertEquals(5, ok.value1(), "witness of a successful CAS is the expected (previous) value");
        assertEquals(9, backing.getLong(RW_BASE + 64));

        Completion miss = c.compareAndSwap(RW, 64, 5, 11).await();
        assertEquals(9, miss.value1(), "witness of a failed CAS is the current value");
        assertEquals(9, backing.getLong(RW_BASE + 64), "failed CAS must not store");
        assertEquals(9, le(c.read(RW, 64, 8).await().bytes()));

        Completion neg = c.compareAndSwap(RW, 64, 9, -1L).await();
        assertEquals(9, neg.value1());
        assertEquals(-1L, backing.getLong(RW_BASE + 64));
    }

    @Test
    void casAtUnalignedOffsetIsUnaligned() {
        FabricConnection c = attached();
        AsymNvmException e = assertFails(ErrorCode.UNALIGNED, c.compareAndSwap(RW, 68, 0, 1));
        assertTrue(e.getMessage().contains("68"), e.getMessage());
        assertFails(ErrorCode.UNALIGNED, c.compareAndSwap(RW, 1, 0, 1));
        assertArrayEquals(new byte[16], backing.read(RW_BASE + 64, 16));
    }

    @Test
    void writeToReadOnlyRegionIsAccessDenied() {
        FabricConnection c = attached();
        assertFails(ErrorCode.ACCESS_DENIED, c.write(RO, 0, new byte[] {1, 2, 3}, 0, 3));
        assertFails(ErrorCode.ACCESS_DENIED, c.compareAndSwap(RO, 0, le(Arrays.copyOf(roContent, 8)), 1));
        assertArrayEquals(Arrays.copyOf(roContent, 8), backing.read(RO_BASE, 8), "read-only memory unchanged");
    }

    @Test
    void ungrantedRegionIsAccessDenied() {
        FabricConnection c = attached();
        assertFails(ErrorCode.ACCESS_DENIED, c.read(NOT_GRANTED, 0, 8));
        assertFails(ErrorCode.ACCESS_DENIED, c.write(NOT_GRANTED, 0, new byte[8], 0, 8));
    }

    @Test
    void outOfBoundsAccessIsOutOfBounds() {
        FabricConnection c = attached();
        AsymNvmException e = assertFails(ErrorCode.OUT_OF_BOUNDS, c.read(RW, RW_LENGTH - 4, 8));
        assertTrue(e.getMessage().contains(String.valueOf(RW_LENGTH)), e.getMessage());
        assertFails(ErrorCode.OUT_OF_BOUNDS, c.read(RO, RO_LENGTH, 1));
        assertFails(ErrorCode.OUT_OF_BOUNDS, c.read(RW, -8, 8));
        assertFails(ErrorCode.OUT_OF_BOUNDS, c.compareAndSwap(RW, RW_LENGTH, 0, 1));
        // a write straddling the end of the read-write window must not spill into the next window
        byte[] ones = new byte[16];
        Arrays.fill(ones, (byte) 0x7F);
        assertFails(ErrorCode.OUT_OF_BOUNDS, c.write(RW, RW_LENGTH - 8, ones, 0, 16));
        assertArrayEquals(new byte[8], backing.read(RW_BASE + RW_LENGTH - 8, 8));
        assertArrayEquals(Arrays.copyOf(roContent, 8), backing.read(RO_BASE, 8));
        // the last bytes of a window are in range
        c.write(RW, RW_LENGTH - 8, ones, 0, 8).await();
        assertArrayEquals(Arrays.copyOf(ones, 8), c.read(RW, RW_LENGTH - 8, 8).await().bytes());
    }

    @Test
    void grantedButUnregisteredRegionIsUnknownRegion() {
        FabricConnection c = attached();
        AsymNvmException e = assertFails(ErrorCode.UNKNOWN_REGION, c.read(UNREGISTERED, 0, 8));
        assertTrue(e.getMessage().contains(String.valueOf(UNREGISTERED)), e.getMessage());
        assertFails(ErrorCode.UNKNOWN_REGION, c.write(UNREGISTERED, 0, new byte[8], 0, 8));
        assertFails(ErrorCode.UNKNOWN_REGION, c.compareAndSwap(UNREGISTERED, 0, 0, 1));
    }

    @Test
    void connectionStillWorksAfterErrors() {
        FabricConnection c = attached();
        assertFails(ErrorCode.OUT_OF_BOUNDS, c.read(RW, RW_LENGTH, 8));
        assertUsable(c, 1);
        assertFails(ErrorCode.ACCESS_DENIED, c.write(RO, 0, new byte[1], 0, 1));
        assertUsable(c, 2);
        assertFails(ErrorCode.UNALIGNED, c.compareAndSwap(RW, 3, 0, 0));
        assertUsable(c, 3);
        assertFails(ErrorCode.UNKNOWN_REGION, c.read(UNREGISTERED, 0, 1));
        assertUsable(c, 4);
        assertTrue(c.isOpen());

        // pipelined: a failing operation in the middle neither fails nor reorders its neighbours
        Completion before = c.write(RW, 800, le(10), 0, 8);
        Completion bad = c.read(RW, RW_LENGTH, 8);
        Completion after = c.write(RW, 800, le(11), 0, 8);
        Completion read = c.read(RW, 800, 8);
        assertEquals(11, le(read.await().bytes()));
        before.await();
        after.await();
        assertFails(ErrorCode.OUT_OF_BOUNDS, bad);
    }

    @Test
    void flushPersistsWhatTheConnectionWrote() {
        FabricConnection c = attached();
        FabricCounters.Snapshot s0 = c.counters().snapshot();
        c.write(RW, 1000, pattern(100, 1), 0, 100);
        c.write(RW, 9000, pattern(50, 2), 0, 50);
        Completion f = c.flush(0, false).await();
        assertTrue(f.value1() >= 150, "bytes persisted " + f.value1());
        assertTrue(f.value2() >= 1, "persist calls " + f.value2());
        FabricCounters.Snapshot d = c.counters().snapshot().minus(s0);
        assertEquals(f.value1(), d.bytesPersisted());
        assertEquals(f.value2(), d.persistCalls());
        assertEquals(1, d.flushes());
        assertEquals(2, d.writes());

        // the dirty set was drained: a second flush has nothing to persist
        Completion again = c.flush(0, false).await();
        assertEquals(0, again.value1());
        assertEquals(0, again.value2());
        assertEquals(f.value1(), c.counters().snapshot().minus(s0).bytesPersisted());
        assertEquals(2, c.counters().snapshot().minus(s0).flushes());
    }

    @Test
    void flushCoversCasAndOnlyThisConnectionsWrites() {
        FabricConnection a = attached();
        FabricConnection b = attached();
        a.write(RW, 2000, pattern(200, 1), 0, 200).await();
        assertEquals(0, b.flush(0, false).await().value1(), "another connection's writes are not its to flush");
        b.compareAndSwap(RW, 4096, 0, 1).await();
        assertTrue(b.flush(0, false).await().value1() >= 8, "a successful CAS is a write to persist");
        assertTrue(a.flush(0, false).await().value1() >= 200);
    }

    @Test
    void stampedFlushWritesTheStampAtTheSessionsStampWord() {
        FabricConnection c = attached();
        c.write(RW, 100, pattern(16, 1), 0, 16);
        long stamp = 0x0123_4567_89AB_CDEFL;
        Completion f = c.flush(stamp, true).await();
        assertTrue(f.value1() >= 16 + 8, "payload and stamp persisted: " + f.value1());
        assertEquals(stamp, backing.getLong(RW_BASE));
        assertEquals(stamp, le(c.read(RW, 0, 8).await().bytes()));
        assertEquals(f.value1(), c.counters().snapshot().bytesPersisted());

        // unstamped flush leaves the stamp word alone; a later stamp replaces it
        c.flush(999, false).await();
        assertEquals(stamp, backing.getLong(RW_BASE));
        c.flush(stamp + 1, true).await();
        assertEquals(stamp + 1, backing.getLong(RW_BASE));
    }

    @Test
    void countersCountOperations() {
        FabricConnection c = attached();
        FabricCounters.Snapshot s0 = c.counters().snapshot();
        c.read(RW, 0, 8);
        c.read(RO, 0, 16);
        c.write(RW, 0, new byte[32], 0, 32);
        c.write(RW, 64, new byte[8], 0, 8);
        c.write(RW, 128, new byte[8], 0, 8);
        c.compareAndSwap(RW, 8, 0, 1);
        c.call(new byte[4]);
        c.flush(0, false).await();
        FabricCounters.Snapshot d = c.counters().snapshot().minus(s0);
        assertEquals(2, d.reads());
        assertEquals(3, d.writes());
        assertEquals(1, d.atomics());
        assertEquals(1, d.flushes());
        assertEquals(1, d.controlCalls());
        assertEquals(1, d.roundTripsWaited(), "only the flush was awaited");
        assertTrue(d.bytesSent() >= 32 + 8 + 8 + 4, "bytes sent " + d.bytesSent());
    }

    @Test
    void roundTripsWaitedCountsEveryAwait() {
        FabricConnection c = attached();
        FabricCounters counters = c.counters();
        long base = counters.snapshot().roundTripsWaited();
        Completion w = c.write(RW, 0, new byte[8], 0, 8);
        Completion r = c.read(RW, 0, 8);
        Completion bad = c.read(RW, RW_LENGTH, 8);
        assertEquals(base, counters.snapshot().roundTripsWaited(), "posting is not waiting");
        r.await();
        assertEquals(base + 1, counters.snapshot().roundTripsWaited());
        w.await(); // already complete: still one round trip the caller chose to wait for
        assertEquals(base + 2, counters.snapshot().roundTripsWaited());
        assertSame(r, r.await());
        assertEquals(base + 3, counters.snapshot().roundTripsWaited());
        assertThrows(AsymNvmException.class, bad::await);
        assertEquals(base + 4, counters.snapshot().roundTripsWaited(), "a failed await is a round trip too");
    }

    @Test
    void connectionsAreIndependentSessions() {
        FabricConnection a = attached();
        FabricConnection b = connect();
        a.write(RW, 300, le(77), 0, 8).await();
        assertFails(ErrorCode.NOT_ATTACHED, b.read(RW, 300, 8));
        b.call(new byte[] {9}).await();
        assertEquals(77, le(b.read(RW, 300, 8).await().bytes()));
        assertEquals(0, b.counters().snapshot().writes(), "counters are per connection");
        assertEquals(1, a.counters().snapshot().writes());
    }

    @Test
    void closedConnectionFailsLaterPostsWithConnectionLost() throws Exception {
        FabricConnection c = attached();
        c.write(RW, 0, le(1), 0, 8).await();
        c.close();
        assertFalse(c.isOpen());
        assertFails(ErrorCode.CONNECTION_LOST, c.read(RW, 0, 8));
        assertFails(ErrorCode.CONNECTION_LOST, c.write(RW, 0, le(2), 0, 8));
        assertFails(ErrorCode.CONNECTION_LOST, c.compareAndSwap(RW, 0, 1, 3));
        assertFails(ErrorCode.CONNECTION_LOST, c.flush(0, true));
        assertFails(ErrorCode.CONNECTION_LOST, c.call(new byte[1]));
        assertEquals(1, backing.getLong(RW_BASE), "nothing posted after close reached memory");
        assertTrue(sessionClosed.await(20, TimeUnit.SECONDS), "control plane told about the closed session");
        c.close(); // idempotent
        // other connections are unaffected
        assertUsable(attached(), 5);
    }
}
