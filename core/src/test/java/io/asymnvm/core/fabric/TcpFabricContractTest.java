package io.asymnvm.core.fabric;

import io.asymnvm.core.AsymNvmException;
import io.asymnvm.core.ErrorCode;
import io.asymnvm.core.fabric.tcp.TcpFabric;
import io.asymnvm.core.fabric.tcp.TcpNicServer;
import io.asymnvm.core.fabric.tcp.TcpServerLimits;
import io.asymnvm.core.fabric.tcp.TcpTransport;
import io.asymnvm.core.layout.FrameLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fabric contract over TCP and loopback, plus wire-level behaviour of the emulated NIC server. */
@Timeout(60)
class TcpFabricContractTest extends FabricContractTest {
    private static final byte[] HANG = "hang".getBytes(StandardCharsets.UTF_8);

    private TcpNicServer server;
    private final List<AutoCloseable> extras = new ArrayList<>();
    private final CountDownLatch hangEntered = new CountDownLatch(1);
    private final CountDownLatch hangRelease = new CountDownLatch(1);

    @Override
    protected Fabric createFabric(EmulatedNic nic) {
        TcpTransport transport = transport();
        if (transport == null) {
            server = new TcpNicServer(nic, new InetSocketAddress("127.0.0.1", 0)).start();
            return new TcpFabric("127.0.0.1", server.port());
        }
        server = new TcpNicServer(nic, new InetSocketAddress("127.0.0.1", 0), TcpServerLimits.DEFAULTS.resolve(
                FrameLayout.MAX_FRAME_LENGTH, TcpServerLimits.UNATTACHED_CONNECTION_ALLOWANCE), null, transport)
                .start();
        return new TcpFabric("127.0.0.1", server.port(), null, transport, spinningClient());
    }

    /** The transport of server and client; null: the system properties' choice (epoll where it loads). */
    protected TcpTransport transport() {
        return null;
    }

    /** Whether the client's loop polls as for SPIN callers. */
    protected boolean spinningClient() {
        return false;
    }

    /** A {@code HANG} control request holds the server's worker thread until the test releases it. */
    @Override
    protected byte[] controlReply(NicSession session, byte[] request) {
        if (Arrays.equals(request, HANG)) {
            hangEntered.countDown();
            try {
                hangRelease.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return request.clone();
    }

    @Override
    protected void stopTransport() {
        hangRelease.countDown();
        for (AutoCloseable c : extras) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
        if (server != null) {
            server.close();
        }
    }

    // ---- raw wire helpers (FrameLayout) ----

    private record Response(byte type, int code, long value1, long value2, byte[] payload) {
        ErrorCode errorCode() {
            return ErrorCode.fromCode(code);
        }

        String message() {
            return new String(payload, StandardCharsets.UTF_8);
        }
    }

    private Socket rawSocket() throws IOException {
        Socket s = new Socket();
        extras.add(s);
        s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()), 5_000);
        s.setSoTimeout(20_000);
        return s;
    }

    private static byte[] requestBody(byte type, int region, long offset, long arg1, long arg2, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(FrameLayout.REQUEST_HEADER_LENGTH + payload.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.put(FrameLayout.TYPE_OFFSET, type);
        b.putInt(FrameLayout.REGION_OFFSET, region);
        b.putLong(FrameLayout.ADDRESS_OFFSET, offset);
        b.putLong(FrameLayout.ARG1_OFFSET, arg1);
        b.putLong(FrameLayout.ARG2_OFFSET, arg2);
        b.put(FrameLayout.REQUEST_HEADER_LENGTH, payload);
        return b.array();
    }

    private static void sendFrame(Socket s, byte[] body) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(body.length).array());
        out.write(body);
        out.flush();
    }

    private static Response receive(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] len = new byte[FrameLayout.LENGTH_FIELD_LENGTH];
        in.readFully(len);
        int length = ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN).getInt();
        assertTrue(length >= FrameLayout.RESPONSE_HEADER_LENGTH && length < 1 << 20, "response length " + length);
        byte[] body = new byte[length];
        in.readFully(body);
        ByteBuffer b = ByteBuffer.wrap(body).order(ByteOrder.LITTLE_ENDIAN);
        return new Response(b.get(FrameLayout.TYPE_OFFSET), b.getInt(FrameLayout.ERROR_CODE_OFFSET),
                b.getLong(FrameLayout.VALUE1_OFFSET), b.getLong(FrameLayout.VALUE2_OFFSET),
                Arrays.copyOfRange(body, FrameLayout.RESPONSE_HEADER_LENGTH, length));
    }

    private static void assertError(ErrorCode expected, Response r) {
        assertEquals(FrameLayout.RESP_ERROR, r.type(), "response type");
        assertEquals(expected.code(), r.code(), r.message());
        assertEquals(expected, r.errorCode());
    }

    /** A valid CONTROL frame is answered with its echo: the socket is still in sync. */
    private static void assertControlEcho(Socket s, String text) throws IOException {
        byte[] payload = text.getBytes(StandardCharsets.UTF_8);
        sendFrame(s, requestBody(FrameLayout.REQ_CONTROL, 0, 0, 0, 0, payload));
        Response r = receive(s);
        assertEquals(FrameLayout.RESP_DATA, r.type(), r.message());
        assertEquals(0, r.code());
        assertArrayEquals(payload, r.payload());
    }

    // ---- TCP-only tests ----

    @Test
    void malformedShortFrameGetsErrorAndSocketStaysUsable() throws Exception {
        Socket s = rawSocket();
        sendFrame(s, pattern(10, 1));
        Response r = receive(s);
        assertError(ErrorCode.MALFORMED_FRAME, r);
        assertTrue(r.message().contains("10 bytes"), r.message());

        assertControlEcho(s, "still here");

        // an empty frame is malformed too, and the following one-sided READ is served
        sendFrame(s, new byte[0]);
        assertError(ErrorCode.MALFORMED_FRAME, receive(s));
        backing.write(RW_BASE + 16, pattern(8, 3), 0, 8);
        sendFrame(s, requestBody(FrameLayout.REQ_READ, RW, 16, 8, 0, new byte[0]));
        Response read = receive(s);
        assertEquals(FrameLayout.RESP_DATA, read.type(), read.message());
        assertArrayEquals(pattern(8, 3), read.payload());
    }

    @Test
    void unknownFrameTypeGetsUnknownFrameType() throws Exception {
        Socket s = rawSocket();
        sendFrame(s, requestBody((byte) 42, RW, 0, 0, 0, new byte[0]));
        Response r = receive(s);
        assertError(ErrorCode.UNKNOWN_FRAME_TYPE, r);
        assertTrue(r.message().contains("42"), r.message());
        sendFrame(s, requestBody((byte) 0, RW, 0, 0, 0, new byte[3]));
        assertError(ErrorCode.UNKNOWN_FRAME_TYPE, receive(s));
        assertControlEcho(s, "after unknown type");
    }

    @Test
    void wireErrorRepliesCarryStableCodesAndValuesForAcks() throws Exception {
        Socket s = rawSocket();
        sendFrame(s, requestBody(FrameLayout.REQ_READ, RW, 0, 8, 0, new byte[0]));
        Response notAttached = receive(s);
        assertError(ErrorCode.NOT_ATTACHED, notAttached);
        assertEquals(7, notAttached.code());

        assertControlEcho(s, "attach");
        sendFrame(s, requestBody(FrameLayout.REQ_READ, RW, 0, -1, 0, new byte[0]));
        assertError(ErrorCode.MALFORMED_FRAME, receive(s));

        backing.putLong(RW_BASE + 24, 41);
        sendFrame(s, requestBody(FrameLayout.REQ_CAS, RW, 24, 41, 42, new byte[0]));
        Response cas = receive(s);
        assertEquals(FrameLayout.RESP_ACK, cas.type());
        assertEquals(41, cas.value1());
        assertEquals(42, backing.getLong(RW_BASE + 24));

        sendFrame(s, requestBody(FrameLayout.REQ_WRITE, RW, 200, 0, 0, pattern(12, 9)));
        assertEquals(FrameLayout.RESP_ACK, receive(s).type());
        assertArrayEquals(pattern(12, 9), backing.read(RW_BASE + 200, 12));

        sendFrame(s, requestBody(FrameLayout.REQ_FLUSH, 0, 0, 0x55, 1, new byte[0]));
        Response flush = receive(s);
        assertEquals(FrameLayout.RESP_ACK, flush.type());
        assertTrue(flush.value1() >= 8 + 12 + 8, "bytes persisted " + flush.value1());
        assertTrue(flush.value2() >= 2, "persist calls " + flush.value2());
        assertEquals(0x55, backing.getLong(RW_BASE));
    }

    @Test
    void oversizedLengthFieldGetsMalformedFrameAndOnlyThatSocketCloses() throws Exception {
        FabricConnection other = attached();
        Socket s = rawSocket();
        s.getOutputStream().write(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(FrameLayout.MAX_FRAME_LENGTH + 1).array());
        s.getOutputStream().flush();
        assertError(ErrorCode.MALFORMED_FRAME, receive(s));
        InputStream in = s.getInputStream();
        assertEquals(-1, in.read(), "the server closes a connection whose framing cannot be trusted");
        assertUsable(other, 6);
    }

    @Test
    void stoppedServerFailsNewOperationsWithConnectionLost() {
        FabricConnection c = attached();
        assertUsable(c, 1);
        server.close();
        assertFails(ErrorCode.CONNECTION_LOST, c.read(RW, 0, 8));
        assertFalse(c.isOpen());
        assertFails(ErrorCode.CONNECTION_LOST, c.write(RW, 0, new byte[8], 0, 8));
        assertFails(ErrorCode.CONNECTION_LOST, c.flush(1, true));
        AsymNvmException e = assertThrows(AsymNvmException.class, fabric::connect);
        assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
    }

    @Test
    void stoppedServerFailsPendingOperationsWithConnectionLost() throws Exception {
        FabricConnection c = attached();
        Completion hang = c.call(HANG);
        assertTrue(hangEntered.await(20, TimeUnit.SECONDS), "server did not receive the HANG call");
        // posted while the server is busy: they reach its socket but are never executed
        Completion pendingWrite = c.write(RW, 2000, pattern(8, 1), 0, 8);
        Completion pendingRead = c.read(RW, 2000, 8);
        assertFalse(pendingWrite.isDone());
        assertFalse(pendingRead.isDone());

        // stop the server while the call runs on a worker: its connections close at once, the close waits for it
        Thread stopper = new Thread(server::close, "stop-server");
        stopper.start();
        assertFails(ErrorCode.CONNECTION_LOST, pendingWrite);
        assertFails(ErrorCode.CONNECTION_LOST, pendingRead);
        hangRelease.countDown();
        stopper.join(20_000);
        assertFalse(stopper.isAlive(), "server close did not return after the running call finished");
        // the HANG reply may or may not have left before the socket closed; either way it is not left hanging
        try {
            assertArrayEquals(HANG, hang.await().bytes());
        } catch (AsymNvmException e) {
            assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
        }
        assertArrayEquals(new byte[8], backing.read(RW_BASE + 2000, 8), "pending write was never executed");
        assertFails(ErrorCode.CONNECTION_LOST, c.read(RW, 0, 8));
        assertFalse(c.isOpen());
    }

    @Test
    void connectingToAClosedPortIsConnectionLost() throws Exception {
        int port;
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = ss.getLocalPort();
        }
        TcpFabric f = new TcpFabric("127.0.0.1", port);
        extras.add(f);
        AsymNvmException e = assertThrows(AsymNvmException.class, f::connect);
        assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode());
        assertTrue(e.getMessage().contains(String.valueOf(port)), e.getMessage());
    }

    @Test
    void portOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new TcpFabric("127.0.0.1", 0));
        assertThrows(IllegalArgumentException.class, () -> new TcpFabric("127.0.0.1", 65536));
    }

    /**
     * A responder that answers with a frame too short to be a response: the requester must drop the connection
     * and fail the operation that frame was matched to (and every later one) with CONNECTION_LOST, not leave it
     * waiting for a reply that will never come.
     */
    @Test
    void garbledResponseFailsTheMatchedOperationWithConnectionLost() throws Exception {
        ServerSocket fake = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        extras.add(fake);
        CountDownLatch answered = new CountDownLatch(1);
        Thread responder = new Thread(() -> {
            try (Socket s = fake.accept()) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                byte[] len = new byte[4];
                in.readFully(len);
                in.readFully(new byte[ByteBuffer.wrap(len).order(ByteOrder.LITTLE_ENDIAN).getInt()]);
                OutputStream out = s.getOutputStream();
                out.write(ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN).putInt(8).putLong(0).array());
                out.flush();
                answered.countDown();
                while (in.read() >= 0) {
                    // drain until the requester hangs up
                }
            } catch (EOFException ignored) {
                // requester closed
            } catch (IOException ignored) {
                // socket closed by teardown
            }
        }, "fake-nic");
        responder.setDaemon(true);
        responder.start();

        TcpFabric f = new TcpFabric("127.0.0.1", fake.getLocalPort());
        extras.add(0, f);
        FabricConnection c = f.connect();
        extras.add(0, c);
        Completion read = c.read(RW, 0, 8);
        AsymNvmException e = assertThrows(AsymNvmException.class, () -> read.await(TimeUnit.SECONDS.toNanos(20)));
        assertEquals(ErrorCode.CONNECTION_LOST, e.errorCode(), e.getMessage());
        assertTrue(answered.await(20, TimeUnit.SECONDS));
        assertFails(ErrorCode.CONNECTION_LOST, c.read(RW, 0, 8));
    }

    /**
     * The posting thread writes frames to the socket itself while the socket takes them, and hands the rest of a
     * frame to the event loop when its send buffer is full; later frames follow through the loop until it has
     * written them. Many large WRITEs posted without waiting fill the buffer, so both paths run; every operation
     * must still complete in posting order with the bytes of the last WRITE before each READ.
     */
    @Test
    void shouldKeepPostingOrderWhenTheSocketBufferFills() {
        FabricConnection c = attached();
        int length = (int) RW_LENGTH - 8;
        int writes = 400; // about 26 MB posted before the first completion is awaited
        List<Completion> posted = new ArrayList<>();
        List<Completion> reads = new ArrayList<>();
        for (int i = 0; i < writes; i++) {
            posted.add(c.write(RW, 8, pattern(length, i), 0, length));
            if (i % 50 == 49) {
                reads.add(c.read(RW, 8, length)); // sees exactly write i: posted after it, before write i + 1
            }
            posted.add(c.write(RW, 0, le(i), 0, 8));
        }
        Completion last = c.read(RW, 0, 8);
        assertEquals(writes - 1, le(last.await().bytes()), "the READ posted last sees the last counter");
        for (Completion p : posted) {
            assertTrue(p.isDone(), "completed in order: everything before the last READ is done");
            p.await();
        }
        for (int k = 0; k < reads.size(); k++) {
            assertArrayEquals(pattern(length, 50 * k + 49), reads.get(k).await().bytes(), "READ " + k);
        }
    }
}
