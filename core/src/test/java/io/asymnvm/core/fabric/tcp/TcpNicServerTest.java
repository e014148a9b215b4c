package io.asymnvm.core.fabric.tcp;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.Access;
import io.asymnvm.core.fabric.Completion;
import io.asymnvm.core.fabric.ControlHandler;
import io.asymnvm.core.fabric.EmulatedNic;
import io.asymnvm.core.fabric.FabricConnection;
import io.asymnvm.core.fabric.NicSession;
import io.asymnvm.core.fabric.PersistenceDomain;
import io.asymnvm.core.fabric.RegionTable;
import io.asymnvm.core.layout.ControlMessageLayout;
import io.asymnvm.core.layout.FrameLayout;
import io.asymnvm.core.region.ByteArrayRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The emulated NIC server's threading and limits: blocking operations never hold an event loop (so with a single
 * event-loop thread another connection is still served), and every limit is enforced with a typed error while
 * the server keeps serving other connections.
 */
@Timeout(60)
class TcpNicServerTest {
    private static final int REGION = 16;
    private static final int REGION_SIZE = 1 << 20;
    /** A control kind the test handler holds until released (an attach waiting for replay). */
    private static final int KIND_HANG = 99;
    private static final int KIND_ERROR = 98;

    private final CountingRegion backing = new CountingRegion();
    private final CountDownLatch hangEntered = new CountDownLatch(1);
    private final CountDownLatch hangRelease = new CountDownLatch(1);
    private final AtomicInteger sessionsClosed = new AtomicInteger();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private TcpNicServer server;
    private TcpFabric fabric;

    /** A region whose persist can be held, and which counts the bytes read from it. */
    private static final class CountingRegion extends ByteArrayRegion {
        final AtomicLong bytesRead = new AtomicLong();
        volatile CountDownLatch persistHeld;
        final CountDownLatch persistEntered = new CountDownLatch(1);

        CountingRegion() {
            super("test", REGION_SIZE);
        }

        @Override
        public void read(long offset, byte[] dst, int dstOffset, int length) {
            bytesRead.addAndGet(length);
            super.read(offset, dst, dstOffset, length);
        }

        @Override
        public void persist(long offset, long length) {
            CountDownLatch held = persistHeld;
            if (held != null) {
                persistEntered.countDown();
                await(held);
            }
            super.persist(offset, length);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(30, TimeUnit.SECONDS), "latch not released");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final ControlHandler control = new ControlHandler() {
        @Override
        public byte[] handle(NicSession session, byte[] request) {
            ByteBuffer b = ControlMessageLayout.wrap(request);
            int kind = b.getInt();
            int frontendId = b.getInt();
            if (kind == KIND_ERROR) {
                throw new AssertionError("an Error inside a control call");
            }
            if (kind == KIND_HANG) {
                hangEntered.countDown();
                await(hangRelease);
            } else if (kind == ControlMessageLayout.KIND_ATTACH) {
                session.bind(frontendId, 1);
                session.grant(REGION, Access.READ_WRITE);
            }
            return new byte[] {(byte) kind};
        }

        @Override
        public void sessionClosed(NicSession session) {
            sessionsClosed.incrementAndGet();
        }
    };

    private TcpServerLimits.Builder limits() {
        return TcpServerLimits.builder().eventLoopThreads(1).maxFrameLength(FrameLayout.MAX_FRAME_LENGTH)
                .maxConnections(64);
    }

    private void start(TcpServerLimits.Builder limits) {
        RegionTable table = new RegionTable();
        table.register(REGION, backing, 0, REGION_SIZE, null);
        EmulatedNic nic = new EmulatedNic(table, control, PersistenceDomain.ADR);
        server = new TcpNicServer(nic, new InetSocketAddress("127.0.0.1", 0), limits.build()).start();
        fabric = new TcpFabric("127.0.0.1", server.port());
    }

    @AfterEach
    void stop() throws Exception {
        hangRelease.countDown();
        CountDownLatch held = backing.persistHeld;
        if (held != null) {
            held.countDown();
        }
        for (AutoCloseable c : closeables) {
            c.close();
        }
        if (fabric != null) {
            fabric.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private FabricConnection attached(int frontendId) {
        FabricConnection c = fabric.connect();
        closeables.add(0, c);
        c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, frontendId, 0)).await();
        return c;
    }

    private static AsymNvmException failure(Completion c) {
        return assertThrows(AsymNvmException.class, () -> c.await(TimeUnit.SECONDS.toNanos(20)));
    }

    private static void awaitCondition(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /** An Error on a worker (not only an exception) still answers its request, and the connection serves on. */
    @Test
    void anErrorInAWorkerIsAnsweredAndTheConnectionKeepsServing() {
        start(limits());
        FabricConnection c = attached(1);
        AsymNvmException e = assertThrows(AsymNvmException.class,
                () -> c.call(ControlMessageLayout.request(KIND_ERROR, 1, 0)).await(5_000_000_000L));
        assertEquals(ErrorCode.UNKNOWN, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("an Error inside a control call"), e.getMessage());
        c.write(REGION, 0, new byte[] {9, 9, 9, 9, 9, 9, 9, 9}, 0, 8).await();
        assertArrayEquals(new byte[] {9, 9, 9, 9, 9, 9, 9, 9}, c.read(REGION, 0, 8).await().bytes());
        assertArrayEquals(new byte[] {(byte) ControlMessageLayout.KIND_PING},
                c.call(ControlMessageLayout.request(ControlMessageLayout.KIND_PING, 1, 0)).await().bytes());
    }

    @Test
    void slowFlushDoesNotDelayAnotherConnectionsRead() {
        start(limits());
        FabricConnection slow = attached(1);
        FabricConnection other = attached(2);
        slow.write(REGION, 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, 0, 8).await();
        backing.persistHeld = new CountDownLatch(1);
        Completion flush = slow.flush(0, false);
        await(backing.persistEntered);
        Completion queued = slow.read(REGION, 0, 8); // behind the FLUSH on its own connection

        // one event-loop thread serves both connections: it must be free while the persist is held
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, other.read(REGION, 0, 8).await().bytes());
        other.write(REGION, 64, new byte[8], 0, 8).await();
        assertFalse(flush.isDone(), "the FLUSH is still held");
        assertFalse(queued.isDone(), "a READ behind a running FLUSH waits for it (replies in request order)");

        backing.persistHeld.countDown();
        assertEquals(8, flush.await().value1(), "bytes persisted");
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, queued.await().bytes());
    }

    /**
     * With a loop per connection a FLUSH runs inline (no hand-off on the commit path); a held persist then still
     * delays no other connection, and a connection arriving meanwhile is placed on a loop that is not persisting.
     */
    @Test
    void flushAloneOnItsLoopDelaysNeitherOthersNorNewConnections() {
        start(limits().eventLoopThreads(2));
        FabricConnection slow = attached(1);
        FabricConnection other = attached(2);
        slow.write(REGION, 0, new byte[] {4, 4, 4, 4, 4, 4, 4, 4}, 0, 8).await();
        backing.persistHeld = new CountDownLatch(1);
        Completion flush = slow.flush(0, false);
        await(backing.persistEntered);

        assertArrayEquals(new byte[] {4, 4, 4, 4, 4, 4, 4, 4}, other.read(REGION, 0, 8).await().bytes());
        for (int i = 0; i < 3; i++) {
            FabricConnection late = attached(3 + i); // connect + attach + read, each on a loop that is free
            late.read(REGION, 0, 8).await(TimeUnit.SECONDS.toNanos(20));
        }
        assertFalse(flush.isDone(), "the FLUSH is still held");
        backing.persistHeld.countDown();
        assertEquals(8, flush.await().value1());
    }

    @Test
    void slowControlCallDoesNotDelayAnotherConnectionsRead() throws Exception {
        start(limits());
        FabricConnection slow = attached(1);
        FabricConnection other = attached(2);
        Completion hang = slow.call(ControlMessageLayout.request(KIND_HANG, 1, 0));
        assertTrue(hangEntered.await(20, TimeUnit.SECONDS));
        Completion behind = slow.write(REGION, 8, new byte[] {9, 9, 9, 9, 9, 9, 9, 9}, 0, 8);

        other.read(REGION, 0, 8).await(TimeUnit.SECONDS.toNanos(20));
        assertFalse(hang.isDone());
        assertFalse(behind.isDone(), "a WRITE behind a running control call waits for it");
        assertArrayEquals(new byte[8], other.read(REGION, 8, 8).await().bytes(), "queued WRITE not executed yet");

        hangRelease.countDown();
        assertArrayEquals(new byte[] {KIND_HANG}, hang.await().bytes());
        behind.await();
        assertArrayEquals(new byte[] {9, 9, 9, 9, 9, 9, 9, 9}, other.read(REGION, 8, 8).await().bytes());
    }

    @Test
    void frameOverTheLimitGetsLimitExceededAfterEarlierRepliesAndClosesOnlyThatConnection() {
        int limit = 4096;
        start(limits().maxFrameLength(limit));
        FabricConnection big = attached(1);
        FabricConnection other = attached(2);
        Completion before = big.write(REGION, 0, new byte[16], 0, 16);
        int payload = limit; // header + length field push it over the limit
        Completion tooBig = big.write(REGION, 0, new byte[payload], 0, payload);
        Completion after = big.read(REGION, 0, 8);

        before.await();
        AsymNvmException e = failure(tooBig);
        assertEquals(ErrorCode.LIMIT_EXCEEDED, e.errorCode(), e.getMessage());
        int frameLength = FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.REQUEST_HEADER_LENGTH + payload;
        assertTrue(e.getMessage().contains(String.valueOf(frameLength)) && e.getMessage().contains("" + limit),
                e.getMessage());
        assertEquals(ErrorCode.CONNECTION_LOST, failure(after).errorCode());
        awaitCondition("the connection to close", () -> !big.isOpen());

        // the largest frame within the limit is executed, on another connection
        int fits = limit - FrameLayout.LENGTH_FIELD_LENGTH - FrameLayout.REQUEST_HEADER_LENGTH;
        other.write(REGION, 0, new byte[fits], 0, fits).await();
        assertEquals(8, other.read(REGION, 0, 8).await().bytes().length);
    }

    @Test
    void attachBeyondTheConnectionsPerFrontendIsRefusedWithoutFencing() {
        start(limits().maxConnectionsPerFrontend(2));
        FabricConnection first = attached(3);
        attached(3);
        FabricConnection third = fabric.connect();
        closeables.add(0, third);
        AsymNvmException e = failure(third.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 3,
                0)));
        assertEquals(ErrorCode.LIMIT_EXCEEDED, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("frontend 3 already has 2") && e.getMessage().contains("limit 2"),
                e.getMessage());
        // the refused connection stays usable for another frontend id, and frontend 3's connections still work
        third.call(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 4, 0)).await();
        third.read(REGION, 0, 8).await();
        first.read(REGION, 0, 8).await();

        int closedBefore = sessionsClosed.get();
        first.close();
        awaitCondition("the server to see the close", () -> sessionsClosed.get() > closedBefore);
        attached(3).read(REGION, 0, 8).await();
    }

    @Test
    void connectionsBeyondTheTotalAreRefusedAndOthersKeepServing() {
        start(limits().maxConnections(2));
        FabricConnection a = attached(1);
        attached(2);
        FabricConnection extra = fabric.connect();
        closeables.add(0, extra);
        AsymNvmException e = failure(extra.read(REGION, 0, 8));
        assertEquals(ErrorCode.LIMIT_EXCEEDED, e.errorCode(), e.getMessage());
        assertTrue(e.getMessage().contains("limit 2"), e.getMessage());
        awaitCondition("the refused connection to close", () -> !extra.isOpen());
        a.read(REGION, 0, 8).await();
        assertEquals(2, server.openConnections());
    }

    @Test
    void idleConnectionIsClosedButARunningControlCallIsNotIdleness() throws Exception {
        start(limits().idleTimeoutMillis(200));
        FabricConnection busy = attached(1);
        FabricConnection idle = attached(2);
        Completion hang = busy.call(ControlMessageLayout.request(KIND_HANG, 1, 0));
        assertTrue(hangEntered.await(20, TimeUnit.SECONDS));
        awaitCondition("the idle connection to close", () -> !idle.isOpen());
        assertEquals(ErrorCode.CONNECTION_LOST, failure(idle.read(REGION, 0, 8)).errorCode());
        assertTrue(busy.isOpen(), "a connection whose control call runs is not idle");
        hangRelease.countDown();
        assertArrayEquals(new byte[] {KIND_HANG}, hang.await().bytes());
        attached(3).read(REGION, 0, 8).await(); // the server serves new connections
    }

    /**
     * A peer sends many READ requests and never reads a reply: the server must stop executing and reading once
     * the replies pending for it pass the high water mark (instead of buffering every reply), keep serving
     * others, and answer everything in order once the peer reads again.
     */
    @Test
    void peerThatDoesNotReadIsNoLongerReadFrom() throws Exception {
        int high = 256 << 10;
        start(limits().writeBufferWaterMarks(64 << 10, high));
        FabricConnection other = attached(2);
        for (long word = 0; word < REGION_SIZE / 8; word++) {
            backing.putLongVolatile(word * 8, word); // each READ at i * 8 starts with i
        }
        int readLength = 16 << 10;
        int requests = 8192; // 128 MiB of replies if the server buffered them all
        try (SocketChannel peer = SocketChannel.open()) {
            peer.setOption(StandardSocketOptions.SO_RCVBUF, 64 << 10);
            peer.connect(new InetSocketAddress("127.0.0.1", server.port()));
            peer.configureBlocking(false);
            writeAll(peer, controlFrame(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0)));
            ByteBuffer reads = ByteBuffer.allocate(requests * 36).order(ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < requests; i++) {
                reads.putInt(FrameLayout.REQUEST_HEADER_LENGTH).put(FrameLayout.REQ_READ).put(new byte[3])
                        .putInt(REGION).putLong((long) i * 8).putLong(readLength).putLong(0);
            }
            reads.flip();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long stableSince = System.nanoTime();
            long lastRead = -1;
            // send what the kernel takes; stop once the server has executed nothing new for 300 ms
            while (System.nanoTime() < deadline) {
                peer.write(reads);
                long now = backing.bytesRead.get();
                if (now != lastRead) {
                    lastRead = now;
                    stableSince = System.nanoTime();
                } else if (System.nanoTime() - stableSince > TimeUnit.MILLISECONDS.toNanos(300)) {
                    break;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
            }
            long executed = backing.bytesRead.get() / readLength;
            System.out.printf("non-reading peer: %d of %d READs executed (%d KiB of replies) before reads "
                    + "stopped; %d request bytes unsent%n", executed, requests, executed * readLength >> 10,
                    reads.remaining());
            assertTrue(executed < requests / 4, "the server executed " + executed + " of " + requests
                    + " READs for a peer that reads nothing: replies are buffered without bound");

            // others are served meanwhile
            assertEquals(5, ByteBuffer.wrap(other.read(REGION, 40, 8).await().bytes())
                    .order(ByteOrder.LITTLE_ENDIAN).getLong());

            // the peer reads again: every reply arrives, in order (each READ's offset is visible in its bytes)
            peer.configureBlocking(true);
            Thread sender = new Thread(() -> {
                try {
                    writeAll(peer, reads);
                } catch (IOException ignored) {
                    // the assertions below fail
                }
            }, "peer-sender");
            sender.start();
            DataInputStream in = new DataInputStream(java.nio.channels.Channels.newInputStream(peer));
            readResponse(in); // attach
            for (int i = 0; i < requests; i++) {
                byte[] body = readResponse(in);
                assertEquals(FrameLayout.RESP_DATA, body[FrameLayout.TYPE_OFFSET], "reply " + i);
                assertEquals(FrameLayout.RESPONSE_HEADER_LENGTH + readLength, body.length, "reply " + i);
                assertEquals(i, ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN)
                        .getLong(FrameLayout.RESPONSE_HEADER_LENGTH), "reply " + i + " out of order");
            }
            sender.join(20_000);
        }
    }

    /** The server's pipeline without sockets (what fuzz tests use): bytes in, replies out, in order. */
    @Test
    void pipelineRunsInAnEmbeddedChannel() {
        RegionTable table = new RegionTable();
        table.register(REGION, backing, 0, REGION_SIZE, null);
        EmulatedNic nic = new EmulatedNic(table, control, PersistenceDomain.ADR);
        NicPipeline pipeline = new NicPipeline(nic, limits().maxFrameLength(1024).build()
                .resolve(1024, 1), Runnable::run);
        io.netty.channel.embedded.EmbeddedChannel ch = new io.netty.channel.embedded.EmbeddedChannel();
        pipeline.init(ch);
        ch.pipeline().fireChannelActive();
        ByteBuffer attach = controlFrame(ControlMessageLayout.request(ControlMessageLayout.KIND_ATTACH, 1, 0));
        ByteBuffer garbage = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putInt(4).putInt(0).flip();
        ByteBuffer tooLong = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(5000).flip();
        ch.writeInbound(io.netty.buffer.Unpooled.wrappedBuffer(attach), io.netty.buffer.Unpooled.wrappedBuffer(
                garbage), io.netty.buffer.Unpooled.wrappedBuffer(tooLong));
        ch.runPendingTasks();
        byte[] types = new byte[3];
        int[] codes = new int[3];
        for (int i = 0; i < 3; i++) {
            io.netty.buffer.ByteBuf reply = ch.readOutbound();
            types[i] = reply.getByte(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.TYPE_OFFSET);
            codes[i] = reply.getIntLE(FrameLayout.LENGTH_FIELD_LENGTH + FrameLayout.ERROR_CODE_OFFSET);
            reply.release();
        }
        assertArrayEquals(new byte[] {FrameLayout.RESP_DATA, FrameLayout.RESP_ERROR, FrameLayout.RESP_ERROR}, types);
        assertEquals(ErrorCode.MALFORMED_FRAME.code(), codes[1]);
        assertEquals(ErrorCode.LIMIT_EXCEEDED.code(), codes[2]);
        assertFalse(ch.isOpen(), "closed after an untrusted length field");
        assertEquals(0, pipeline.registry().openConnections());
    }

    private static ByteBuffer controlFrame(byte[] request) {
        ByteBuffer b = ByteBuffer.allocate(4 + FrameLayout.REQUEST_HEADER_LENGTH + request.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(FrameLayout.REQUEST_HEADER_LENGTH + request.length).put(FrameLayout.REQ_CONTROL).put(new byte[3])
                .putInt(0).putLong(0).putLong(0).putLong(0).put(request);
        return b.flip();
    }

    private static void writeAll(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.write(b) == 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
        }
    }

    private static byte[] readResponse(DataInputStream in) throws IOException {
        byte[] len = new byte[4];
        in.readFully(len);
        byte[] body = new byte[ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN).getInt()];
        in.readFully(body);
        return body;
    }
}
